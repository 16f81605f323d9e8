/**
 * Whether what each visitor of a benchmark read is what the platform kept (issue: "the stored answer equals what the
 * stream delivered", under load and when a part fails). A visitor's question carries its number ("question N from
 * …"); the answer stored for it is the bot message that follows that visitor message in its conversation.
 */

/** How one streamed turn ended, as the visitor saw it. */
export interface StreamedTurn {
  question: number;
  /** The `delta` frames' text, in order. */
  text: string;
  /** The error frame's code (`internal` for one without a code), when one came. */
  error?: string;
  /** The end frame came. */
  ended: boolean;
  /** Some frame carried a `notice` (a service message, not the agent's answer). */
  notice?: boolean;
}

/** A conversation's messages in order, as stored. */
export interface StoredMessage {
  session_id: string;
  author: string;
  text: string;
}

export interface IntegrityReport {
  /** Turns that ended with their end frame and no error frame. */
  answered: number;
  /** …whose streamed text equals the stored answer. */
  equal: number;
  /** …whose streamed text is not the stored answer (or none was stored): must be 0. */
  differ: number;
  /** Turns that got an error frame, and whether an answer was stored for them after all. */
  errored: { stored: number; not_stored: number; codes: Record<string, number> };
  /** Turns whose stream broke off without an end frame. */
  cut: number;
  /** Turns with a service notice (not compared). */
  notices: number;
  /** Up to three differing turns: where the texts part. */
  samples: { question: number; streamed_chars: number; stored_chars: number | null; first_difference: number }[];
}

const QUESTION = /question (\d+) from/;

/** The stored answer of each numbered question: the bot message after the visitor's, if one came before the next. */
export function storedAnswers(messages: StoredMessage[]): Map<number, string> {
  const answers = new Map<number, string>();
  let pending: { session: string; question: number } | undefined;
  for (const m of messages) {
    if (pending && m.session_id !== pending.session) pending = undefined;
    if (m.author === 'visitor') {
      const n = QUESTION.exec(m.text);
      pending = n ? { session: m.session_id, question: Number(n[1]) } : undefined;
    } else if (m.author === 'bot' && pending) {
      answers.set(pending.question, m.text);
      pending = undefined;
    }
  }
  return answers;
}

/** Compares every streamed turn with what its conversation stored. */
export function compareWithTranscript(turns: StreamedTurn[], messages: StoredMessage[]): IntegrityReport {
  const stored = storedAnswers(messages);
  const report: IntegrityReport = {
    answered: 0,
    equal: 0,
    differ: 0,
    errored: { stored: 0, not_stored: 0, codes: {} },
    cut: 0,
    notices: 0,
    samples: [],
  };
  for (const t of turns) {
    const answer = stored.get(t.question);
    if (t.notice) {
      report.notices++;
    } else if (t.error !== undefined) {
      report.errored.codes[t.error] = (report.errored.codes[t.error] ?? 0) + 1;
      if (answer !== undefined) report.errored.stored++;
      else report.errored.not_stored++;
    } else if (!t.ended) {
      report.cut++;
    } else {
      report.answered++;
      if (answer === t.text) {
        report.equal++;
      } else {
        report.differ++;
        if (report.samples.length < 3) {
          let i = 0;
          while (answer !== undefined && i < t.text.length && t.text[i] === answer[i]) i++;
          report.samples.push({
            question: t.question,
            streamed_chars: t.text.length,
            stored_chars: answer?.length ?? null,
            first_difference: i,
          });
        }
      }
    }
  }
  return report;
}
