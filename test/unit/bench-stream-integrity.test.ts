import { describe, expect, it } from '@jest/globals';
import { type StoredMessage, compareWithTranscript, storedAnswers } from '../../bench/stream-integrity';

const visitor = (session: string, n: number): StoredMessage => ({
  session_id: session,
  author: 'visitor',
  text: `[[fake:length-480]] question ${n} from ${session}`,
});
const bot = (session: string, text: string): StoredMessage => ({ session_id: session, author: 'bot', text });

describe("the load benchmark's check of what visitors read against what was stored", () => {
  it('pairs each numbered question with the bot message after it in the same conversation, if one came', () => {
    const answers = storedAnswers([
      visitor('a', 1),
      bot('a', 'one'),
      visitor('a', 3),
      // No answer for 3 before the conversation's next question, nor for 5 at the end of its conversation.
      visitor('a', 4),
      bot('a', 'four'),
      visitor('a', 5),
      bot('b', 'not an answer to 5'),
      visitor('b', 2),
      bot('b', 'two'),
    ]);
    expect([...answers]).toEqual([
      [1, 'one'],
      [4, 'four'],
      [2, 'two'],
    ]);
  });

  it('counts answered turns whose text differs from the stored answer, and where they part', () => {
    const report = compareWithTranscript(
      [
        { question: 1, text: 'one', ended: true },
        // A retry that showed the visitor the start twice.
        { question: 2, text: 'twtwo', ended: true },
        // Answered on the stream, nothing stored.
        { question: 3, text: 'three', ended: true },
      ],
      [visitor('a', 1), bot('a', 'one'), visitor('a', 2), bot('a', 'two'), visitor('a', 3)],
    );
    expect(report).toMatchObject({ answered: 3, equal: 1, differ: 2 });
    expect(report.samples).toEqual([
      { question: 2, streamed_chars: 5, stored_chars: 3, first_difference: 2 },
      { question: 3, streamed_chars: 5, stored_chars: null, first_difference: 0 },
    ]);
  });

  it('keeps error frames, cut streams and service notices apart from the comparison', () => {
    const report = compareWithTranscript(
      [
        { question: 1, text: 'on', error: 'llm_overloaded', ended: true },
        { question: 2, text: '', error: 'internal', ended: true },
        { question: 3, text: 'thr', ended: false },
        { question: 4, text: 'We are having trouble', notice: true, ended: true },
      ],
      [visitor('a', 1), bot('a', 'one'), visitor('a', 2), visitor('a', 3), visitor('a', 4)],
    );
    expect(report).toMatchObject({
      answered: 0,
      differ: 0,
      errored: { stored: 1, not_stored: 1, codes: { llm_overloaded: 1, internal: 1 } },
      cut: 1,
      notices: 1,
    });
  });
});
