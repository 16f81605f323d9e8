import { afterAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { announce, outcomeNotice } from '../../lib/announcements';
import { type TurnSubscription, subscribeTurn } from '../../lib/conversations/turn';
import { createLogger } from '../../lib/logger';
import { DELTA_CHANNEL, type DeltaMessage } from '../../lib/streams/channel';
import { type DeltaHub, createDeltaHub } from '../../lib/streams/listener';
import { testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * How the API waits for a chat turn (lib/conversations/turn.ts, subscribeTurn), against the stack's Postgres: the
 * turn's outcome reaches it one way, announced by the statement that records it (lib/announcements.ts,
 * docs/decisions/154-one-way-for-the-answer.md), and its wait for a turn's last pieces is one round trip on the listener's
 * connection, never a poll. What the worker announces: test/workflow/turn-activity.test.ts.
 */
const hub = createDeltaHub(stackInfo().databaseUrl, createLogger('silent', 'test'));
afterAll(() => hub.close());

function subscribe(turnId: string, opts: { onFragment?: (msg: DeltaMessage) => void; drainMs?: number } = {}) {
  return subscribeTurn({ db: testDb(), deltaHub: hub }, turnId, opts) as Promise<TurnSubscription>;
}

describe('the API waiting for a turn (subscribeTurn)', () => {
  it('hears the outcome when its announcement comes, and its wait for the last pieces then ends at once', async () => {
    const turnId = `run_${randomUUID()}`;
    const subscription = await subscribe(turnId, { drainMs: 60_000 });
    const outcome = { answer: 'We open at nine.', sources: [{ ref: 1, source_id: 'src_1', title: 'Hours' }] };
    await announce(testDb(), outcomeNotice(turnId, outcome));
    await expect(subscription.announced).resolves.toEqual({ ...outcome, runId: turnId });
    await expect(subscription.drain()).resolves.toEqual({ ...outcome, runId: turnId });
    subscription.close();
  });

  it('waits for the last pieces: every fragment sent before has been handed over when the wait ends', async () => {
    const turnId = `run_${randomUUID()}`;
    const shown: string[] = [];
    const subscription = await subscribe(turnId, { onFragment: (msg) => shown.push(msg.d), drainMs: 60_000 });
    const pieces = ['We ', 'open ', 'at ', 'nine.'];
    let offset = 0;
    for (const d of pieces) {
      await testDb().query(`SELECT pg_notify($1, $2)`, [DELTA_CHANNEL, JSON.stringify({ t: turnId, o: offset, d })]);
      offset += d.length;
    }
    // Nothing announced the outcome: the wait ends once the listener has everything sent before it.
    await expect(subscription.drain()).resolves.toBeNull();
    expect(shown).toEqual(pieces);
    subscription.close();
  });

  it('ends its wait for the last pieces at the deadline when the listener does not answer', async () => {
    const turnId = `run_${randomUUID()}`;
    // A listener whose connection stalled: its round trip never comes back.
    const stalled: DeltaHub = { ...hub, sync: () => new Promise<void>(() => undefined) };
    const subscription = (await subscribeTurn({ db: testDb(), deltaHub: stalled }, turnId, {
      drainMs: 300,
    })) as TurnSubscription;
    await expect(subscription.drain()).resolves.toBeNull();
    subscription.close();
  });
});
