/**
 * The Temporal UI's "Stack Trace" of a running conversation (the `__stack_trace` query): off by default, because
 * collecting it takes a source-mapped stack trace of every promise a workflow makes (patches/, docs/decisions/119-streamed-turn-cpu.md);
 * on with WORKER_WORKFLOW_STACK_TRACES=true, for the time someone debugs a stuck workflow.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { conversationWorkflowId } from '../../workflows/contracts/conversation';
import { type OwnPlatform, http, newBot, startOwnPlatform, useTemporalClient } from '../support/helpers';

const client = useTemporalClient();

/** A conversation with one answered turn, on the given API; its workflow stays open for the next message. */
async function conversation(bot: BootstrapResult, baseUrl?: string): Promise<string> {
  const sessionId = randomUUID();
  const res = await http('/v1/api/chat', {
    key: bot.keys.secret_key,
    body: { session_id: sessionId, message: 'hello' },
    baseUrl,
  });
  expect(res.status).toBe(200);
  return conversationWorkflowId(bot.bot_id, sessionId);
}

describe("a running conversation's stack trace", () => {
  it('is not collected by default: the query says so', async () => {
    const workflowId = await conversation(await newBot());
    await expect(client.workflow.getHandle(workflowId).query('__stack_trace')).rejects.toThrow(
      /stack traces are not enabled/i,
    );
  });

  describe('with WORKER_WORKFLOW_STACK_TRACES=true', () => {
    let own: OwnPlatform;
    beforeAll(async () => {
      own = await startOwnPlatform('stack-traces', { WORKER_WORKFLOW_STACK_TRACES: 'true' });
    }, 120_000);
    afterAll(() => own?.stop());

    it('shows where the conversation waits', async () => {
      const workflowId = await conversation(await newBot(), own.baseUrl);
      const trace = await client.workflow.getHandle(workflowId).query<string>('__stack_trace');
      expect(trace).toContain('conversationWorkflow');
    });
  });
});
