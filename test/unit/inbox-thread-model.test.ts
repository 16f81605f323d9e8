/** One conversation of the inbox, apart from the page (web/dashboard/src/pages/inbox/thread-model.ts). */
import { describe, expect, it, jest } from '@jest/globals';
import { LIMITS } from '../../lib/limits';

/**
 * The dashboard's sources are an ES module package whose files import each other without extensions (Vite resolves
 * them), which this project's TypeScript settings cannot follow from a test: the code comes through Jest, typed here
 * by what the test uses of it.
 */
type Message = { id: string; author: string; text: string; at: number };
type Page = { messages: Message[]; next_cursor: string; resume_cursor: string; status: string };
type Failure = { status: number; code: string; message: string };
type Read = (cursor: string | undefined) => Promise<{ ok: true; value: Page } | ({ ok: false } & Failure)>;
const { MessageLog, replyTooLong, countShown } = jest.requireActual<{
  MessageLog: new () => {
    merge(messages: Message[]): Message[];
    ordered(): Message[];
    readNew(read: Read): Promise<{ ok: true; value: Page; added: Message[] } | { ok: false; failure: Failure }>;
  };
  replyTooLong(text: string): Failure | undefined;
  countShown(length: number): boolean;
}>('../../web/dashboard/src/pages/inbox/thread-model');

const m = (id: string, at: number): Message => ({ id, author: 'visitor', text: id, at });
const page = (messages: Message[], next = '', resume = 'r'): Page => ({
  messages,
  next_cursor: next,
  resume_cursor: resume,
  status: 'waiting',
});

describe('an open conversation, apart from the page', () => {
  it('keeps messages by id, in time order: a message read twice is added once', () => {
    const log = new MessageLog();
    expect(log.merge([m('b', 2), m('a', 1)]).map((x) => x.id)).toEqual(['b', 'a']);
    expect(log.merge([m('a', 1), m('c', 3)]).map((x) => x.id)).toEqual(['c']);
    expect(log.ordered().map((x) => x.id)).toEqual(['a', 'b', 'c']);
  });

  it('follows the pages to the end, then goes on after the last message read (`resume_cursor`)', async () => {
    const log = new MessageLog();
    const asked: (string | undefined)[] = [];
    const pages: Record<string, Page> = {
      first: page([m('a', 1)], 'p2', 'p2'),
      p2: page([m('b', 2)], '', 'after-b'),
      'after-b': page([m('c', 3)], '', 'after-c'),
    };
    const read: Read = async (cursor) => {
      asked.push(cursor);
      return { ok: true, value: pages[cursor ?? 'first'] };
    };
    const first = await log.readNew(read);
    expect(first.ok && first.added.map((x) => x.id)).toEqual(['a', 'b']);
    const next = await log.readNew(read);
    expect(next.ok && next.added.map((x) => x.id)).toEqual(['c']);
    expect(asked).toEqual([undefined, 'p2', 'after-b']);
  });

  it('says why a read failed', async () => {
    const failure = { status: 404, code: 'not_found', message: 'No such conversation.' };
    const res = await new MessageLog().readNew(async () => ({ ok: false, ...failure }));
    expect(res).toEqual({ ok: false, failure: { ok: false, ...failure } });
  });

  it('refuses a reply longer than the API takes before sending it, and counts the last thousand characters', () => {
    const max = LIMITS.messageChars;
    expect(replyTooLong('x'.repeat(max))).toBeUndefined();
    expect(replyTooLong('x'.repeat(max + 1))).toMatchObject({ status: 400, code: 'bad_request' });
    expect(replyTooLong('x'.repeat(max + 1))?.message).toBe(`A reply can be at most ${max} characters.`);
    expect(countShown(max - 1000)).toBe(false);
    expect(countShown(max - 999)).toBe(true);
  });
});
