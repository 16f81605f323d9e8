import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, newBot, ownerSession } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

/**
 * The production shape runs the Temporal UI (stack/temporal-ui.ts: Temporal's ui-server, built by setup) on its
 * own Temporal server, and the dashboard's run log links each run there: ops staff open the link and see the run's
 * workflow, read by the UI from the cluster's frontend.
 */
describe('the Temporal UI of the production shape', () => {
  it("a run's link in the run log opens its workflow, which the UI reads from the cluster's Temporal", async () => {
    const ui = stackInfo().env.TEMPORAL_UI_URL;
    expect(ui).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const bot = await newBot();
    const chat = await http('/v1/api/chat', {
      key: bot.keys.secret_key,
      body: { session_id: `ui-${randomUUID()}`, message: 'Hello from the cluster' },
    });
    expect(chat.status).toBe(200);
    const runs = await http(`/v1/dashboard/bots/${bot.bot_id}/runs?limit=1`, { headers: await ownerSession(bot) });
    expect(runs.status).toBe(200);
    const link: string = runs.body.runs[0].workflow_url;
    expect(link.startsWith(`${ui}/namespaces/default/workflows/`)).toBe(true);

    // The page is the UI's web app…
    const page = await fetch(link);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    // …and the workflow it shows comes from the cluster's frontend, through the UI's own API.
    const workflowId = decodeURIComponent(link.slice(`${ui}/namespaces/default/workflows/`.length));
    const described = await fetch(`${ui}/api/v1/namespaces/default/workflows/${encodeURIComponent(workflowId)}`);
    expect(described.status).toBe(200);
    const body = (await described.json()) as { workflowExecutionInfo: { execution: { workflowId: string } } };
    expect(body.workflowExecutionInfo.execution.workflowId).toBe(workflowId);
  });
});
