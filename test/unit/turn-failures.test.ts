import { describe, expect, it } from '@jest/globals';
import { turnError } from '../../lib/conversations/chat';
import { failureFrame } from '../../lib/conversations/stream';
import { type TurnFailure, TurnNotSentError, failureOf } from '../../lib/conversations/turn';

/**
 * What a chat turn's failure means, as a value (lib/conversations/turn.ts, TurnFailure): whether the turn goes on
 * (`stillRunning`: a retry with the same Idempotency-Key joins it) or never reached a worker (`notSent`: nothing is
 * stored, a retry sends it afresh), and how the JSON endpoints and the streams answer it.
 */
const temporalGone = () => Object.assign(new Error('14 UNAVAILABLE: Connection refused'), { code: 14 });
const taskFailing = () =>
  Object.assign(new Error('Workflow Task in failed state.'), { code: 9, details: 'Workflow Task in failed state.' });

describe('a turn failure read from what sending it threw', () => {
  it('a turn Temporal kept refusing (its workflow task keeps failing) is busy and was not sent', () => {
    expect(failureOf(new TurnNotSentError(taskFailing()))).toEqual({
      kind: 'busy',
      stillRunning: false,
      notSent: true,
    });
  });

  it('Temporal out of reach before the turn reached a worker: not sent', () => {
    expect(failureOf(new TurnNotSentError(temporalGone()))).toMatchObject({
      kind: 'unreachable',
      stillRunning: false,
      notSent: true,
    });
  });

  it('a dependency out of reach after the turn may have begun: it goes on', () => {
    const err = temporalGone();
    expect(failureOf(err)).toEqual({ kind: 'unreachable', cause: err, stillRunning: true, notSent: false });
  });

  it('anything else is no failure of the turn but a bug, thrown on', () => {
    expect(failureOf(new Error('a bug'))).toBeNull();
  });
});

describe('a turn failure answered', () => {
  const failed: TurnFailure = {
    kind: 'failed',
    failure: { type: 'no_credits', message: 'No credits left' },
    stillRunning: false,
    notSent: false,
  };
  const timedOut: TurnFailure = { kind: 'timed_out', stillRunning: true, notSent: false };
  const busy: TurnFailure = { kind: 'busy', stillRunning: false, notSent: true };
  const gone: TurnFailure = { kind: 'unreachable', cause: temporalGone(), stillRunning: true, notSent: false };

  it('as JSON: the contract’s code with the session, and the key kept on a turn that goes on', () => {
    const cases = [failed, timedOut, busy, gone].map((f) => {
      const e = turnError(f, 'session-1');
      return { status: e.status, body: e.toBody(), retryAfter: e.headers['Retry-After'], turnPending: e.turnPending };
    });
    expect(cases).toEqual([
      {
        status: 503,
        body: { error: expect.any(String), code: 'llm_unavailable', session_id: 'session-1' },
        retryAfter: undefined,
        turnPending: false,
      },
      {
        status: 503,
        body: { error: expect.any(String), code: 'llm_overloaded', session_id: 'session-1', retry_after: 10 },
        retryAfter: '10',
        turnPending: true,
      },
      {
        status: 503,
        body: { error: expect.any(String), code: 'llm_overloaded', session_id: 'session-1', retry_after: 2 },
        retryAfter: '2',
        turnPending: false,
      },
      {
        status: 503,
        body: { error: expect.any(String), code: 'service_unavailable' },
        retryAfter: '2',
        turnPending: true,
      },
    ]);
  });

  it("as a stream's error frame: `llm_overloaded` says when to retry, also for a dependency out of reach", () => {
    expect([failed, timedOut, busy, gone].map(failureFrame)).toEqual([
      { error: expect.any(String), code: 'llm_unavailable' },
      { error: expect.any(String), code: 'llm_overloaded', retry_after: 10 },
      { error: expect.any(String), code: 'llm_overloaded', retry_after: 2 },
      { error: expect.any(String), code: 'llm_overloaded', retry_after: 2 },
    ]);
  });
});
