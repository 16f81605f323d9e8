/**
 * A cached answer given again is streamed like a model's, a few words a fragment (lib/runs/generate.ts,
 * replayCached); how the worker's publisher then groups fragments into flushes is its own business (under load, in
 * one flush), so the pieces are asserted here, where they are pushed.
 */
import { describe, expect, it } from '@jest/globals';
import { replayCached } from '../../lib/runs/generate';
import type { TurnStream } from '../../lib/streams/publisher';
import type { AgentRunInput } from '../../workflows/contracts/agent-run';

function recordingStream(prefix = ''): TurnStream & { pushed: string[]; finished: boolean } {
  return {
    prefix,
    complete: false,
    pushed: [],
    finished: false,
    push(delta) {
      this.pushed.push(delta);
    },
    async finish() {
      this.finished = true;
    },
    async close() {},
    drop() {},
  };
}

const run: AgentRunInput = {
  runId: 'run_1',
  botId: 'bot_1',
  workspaceId: 'ws_1',
  triggerKind: 'message',
  input: 'What are your opening hours?',
  streamTurnId: 'run_1',
  turnTimeoutMs: 60_000,
};
const cached = {
  answer: 'We are open from nine to five on weekdays, and from ten to two on Saturdays.',
  model: 'fake-model',
  sources: null,
};

describe('a cached answer replayed', () => {
  it('is streamed a few words a fragment, then the stream is finished, and costs no tokens', async () => {
    const stream = recordingStream();
    const answer = await replayCached({ deltas: undefined as never }, run, cached, stream);
    expect(stream.pushed.length).toBeGreaterThan(3);
    expect(stream.pushed.every((p) => p.trim().split(/\s+/).length <= 4)).toBe(true);
    expect(stream.pushed.join('')).toBe(cached.answer);
    expect(stream.finished).toBe(true);
    expect(answer).toMatchObject({ text: cached.answer, model: 'cache:fake-model', promptTokens: 0 });
  });

  it('continues after what an earlier attempt of the turn already showed', async () => {
    const shown = 'We are open from nine ';
    const stream = recordingStream(shown);
    await replayCached({ deltas: undefined as never }, run, cached, stream);
    expect(stream.pushed.join('')).toBe(cached.answer.slice(shown.length));
  });
});
