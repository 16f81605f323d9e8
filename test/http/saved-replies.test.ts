/** The team's saved replies: listed by title, unique titles, capped, the workspace's own. */
import { describe, expect, it } from '@jest/globals';
import { http, newBot, ownerSession, testDb } from '../support/helpers';

describe("the team's saved replies", () => {
  it('are saved under a unique title, listed by title, deleted, and seen by nobody else', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const save = (body: Record<string, unknown>) => http('/v1/dashboard/saved-replies', { headers: owner, body });
    const returns = await save({ title: '  Returns  ', text: 'You can return any item within 30 days.' });
    expect(returns.status).toBe(201);
    expect(returns.body).toMatchObject({ title: 'Returns', text: 'You can return any item within 30 days.' });
    expect((await save({ title: 'Delivery times', text: 'Parcels arrive in 2–3 days.' })).status).toBe(201);
    const again = await save({ title: 'RETURNS', text: 'Another text' });
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);
    for (const body of [
      { title: '', text: 'x' },
      { title: 'x' },
      { title: 'y'.repeat(81), text: 'x' },
      { title: 'z', text: '  ' },
    ]) {
      expect((await save(body)).status).toBe(400);
    }
    const list = await http('/v1/dashboard/saved-replies', { headers: owner });
    expect(list.body.replies.map((r: { title: string }) => r.title)).toEqual(['Delivery times', 'Returns']);

    const stranger = await ownerSession(await newBot());
    expect((await http('/v1/dashboard/saved-replies', { headers: stranger })).body.replies).toEqual([]);
    const foreign = await http(`/v1/dashboard/saved-replies/${returns.body.id}`, {
      method: 'DELETE',
      headers: stranger,
    });
    expect(foreign.status).toBe(404);

    expect(
      (await http(`/v1/dashboard/saved-replies/${returns.body.id}`, { method: 'DELETE', headers: owner })).status,
    ).toBe(200);
    const after = await http('/v1/dashboard/saved-replies', { headers: owner });
    expect(after.body.replies.map((r: { title: string }) => r.title)).toEqual(['Delivery times']);
  });

  it('are at most 100 a workspace, said when the 101st is asked for', async () => {
    const bot = await newBot();
    await testDb().query(
      `INSERT INTO saved_replies (id, workspace_id, title, text)
       SELECT 'svr_' || g || '_' || $1, $1, 'Reply ' || g, 'Text ' || g FROM generate_series(1, 100) g`,
      [bot.workspace_id],
    );
    const res = await http('/v1/dashboard/saved-replies', {
      headers: await ownerSession(bot),
      body: { title: 'One more', text: 'x' },
    });
    expect([res.status, res.body.code]).toEqual([400, 'bad_request']);
    expect(res.body.error).toContain('at most 100');
  });
});
