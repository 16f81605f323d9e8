/**
 * Is the team there? The widget's configuration says whether someone of the workspace used the dashboard in the last
 * two minutes, and how soon a person usually replies after a handoff (the median over 30 days, from 3 replies on).
 */
import { describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession, testDb } from '../support/helpers';
import { widgetCall, widgetSession } from '../support/widget';

describe('the team, as the widget tells visitors', () => {
  it('is online while someone uses the dashboard, and not once they have been away for two minutes', async () => {
    const bot = await newBot();
    const config = async () => (await widgetCall(bot, '/v1/widget/config')).body.team;
    expect(await config()).toEqual({ online: false, typical_reply_seconds: null });
    const owner = await ownerSession(bot);
    expect((await http('/v1/dashboard/notifications', { headers: owner })).status).toBe(200);
    expect((await config()).online).toBe(true);
    await testDb().query(`UPDATE users SET last_active_at = now() - interval '121 seconds' WHERE workspace_id = $1`, [
      bot.workspace_id,
    ]);
    expect((await config()).online).toBe(false);
  });

  it('says how soon a person usually replies, from three answered handoffs on', async () => {
    // The typical reply is kept a few minutes per API process, so each bot is read once, after its handoffs.
    const fewer = await newBot();
    for (const wait of [60, 240]) await answeredHandoff(fewer, wait);
    expect((await widgetCall(fewer, '/v1/widget/config')).body.team.typical_reply_seconds).toBeNull();

    const enough = await newBot();
    for (const wait of [60, 240, 600]) await answeredHandoff(enough, wait);
    const seconds = (await widgetCall(enough, '/v1/widget/config')).body.team.typical_reply_seconds;
    expect(seconds).toBeGreaterThanOrEqual(240);
    expect(seconds).toBeLessThan(250);
  });
});

/** A visitor asks for a person and gets a reply, as if the handoff had come `waitSeconds` before it. */
async function answeredHandoff(bot: BootstrapResult, waitSeconds: number): Promise<void> {
  const visitor = await widgetSession(bot);
  const sid = visitor.session_id;
  const asked = await widgetCall(bot, '/v1/widget/handoff', {
    method: 'POST',
    body: { session_id: sid },
    token: visitor.visitor_token,
  });
  expect(asked.status).toBe(200);
  const res = await http(`/v1/api/operator/threads/${sid}/reply`, { key: bot.keys.secret_key, body: { text: 'Hi!' } });
  expect(res.status).toBe(200);
  await testDb().query(
    `UPDATE conversations SET escalated_at = escalated_at - make_interval(secs => $2) WHERE session_id = $1`,
    [sid, waitSeconds],
  );
}
