import { beforeAll, describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http, newBot, ownerSession } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';
import { seedReports } from '../support/reports';

/**
 * The owner's reports (issue 21, items 5 and 6): what is missing — unanswered questions grouped, "add an answer",
 * each source's usefulness — and what the AI resolved, over a period.
 */
const dayShift = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

describe("the owner's reports", () => {
  let bot: BootstrapResult;
  let owner: Record<string, string>;
  let comment: string;

  beforeAll(async () => {
    bot = await newBot();
    owner = await ownerSession(bot);
    comment = 'Quick and kind';
    await seedReports(bot);
  }, 60_000);

  it('groups the questions the agent could not answer, and an added answer takes its group off the list', async () => {
    const gaps = await http(`/v1/dashboard/bots/${bot.bot_id}/gaps`, { headers: owner });
    expect(gaps.status).toBe(200);
    expect(gaps.body.days).toBe(30);
    const groups = gaps.body.groups as { question: string; count: number; run_ids: string[]; examples: unknown[] }[];
    expect(groups.map((g) => g.count)).toEqual([2, 1]);
    expect(groups[0].examples).toHaveLength(2);
    expect(groups[0].examples.map((e: any) => e.text).join(' ')).toMatch(/gift cards.*gift card|gift card.*gift cards/);
    expect(groups[1].question).toContain('phone number');

    const answered = await http(`/v1/dashboard/bots/${bot.bot_id}/gaps/answer`, {
      headers: owner,
      body: { run_ids: groups[0].run_ids, title: 'Gift cards', text: 'We sell gift cards of 25, 50 and 100 euros.' },
    });
    expect(answered.status).toBe(201);
    expect(answered.body).toEqual({ source_id: expect.any(String), answered: 2 });
    const source = await http(`/v1/api/knowledge/${answered.body.source_id}`, { key: bot.keys.secret_key });
    expect(source.body).toMatchObject({ title: 'Gift cards', text: 'We sell gift cards of 25, 50 and 100 euros.' });
    const after = await http(`/v1/dashboard/bots/${bot.bot_id}/gaps`, { headers: owner });
    expect(after.body.groups.map((g: { count: number }) => g.count)).toEqual([1]);

    // Answered already: refused, and nothing more is written.
    const again = await http(`/v1/dashboard/bots/${bot.bot_id}/gaps/answer`, {
      headers: owner,
      body: { run_ids: groups[0].run_ids, text: 'Again' },
    });
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);
    const bad = await http(`/v1/dashboard/bots/${bot.bot_id}/gaps/answer`, {
      headers: owner,
      body: { run_ids: [], text: '' },
    });
    expect([bad.status, bad.body.code]).toEqual([400, 'bad_request']);
  });

  it("shows each source's use and ratings", async () => {
    const res = await http(`/v1/dashboard/bots/${bot.bot_id}/source-usefulness?days=7`, { headers: owner });
    expect(res.status).toBe(200);
    const byId = Object.fromEntries(res.body.sources.map((s: { source_id: string }) => [s.source_id, s]));
    expect(byId.shipping).toMatchObject({ title: 'Shipping times', used: 2, rated_up: 1, rated_down: 1 });
    expect(byId.shipping.last_used_at).toEqual(expect.any(Number));
    expect(byId.warranty).toMatchObject({ used: 0, rated_up: 0, rated_down: 0, last_used_at: null });
    expect(res.body.sources[0].source_id).toBe('shipping');
  });

  it('counts what the AI resolved, what it did not, and what people did, with ratings and satisfaction', async () => {
    const res = await http(
      `/v1/dashboard/reports/resolution?bot_id=${bot.bot_id}&from=${dayShift(-1)}&to=${dayShift(1)}&time_zone=UTC`,
      { headers: owner },
    );
    expect(res.status).toBe(200);
    expect(res.body.totals).toEqual({
      conversations: 6,
      resolved_by_agent: 1,
      not_resolved_by_agent: 4,
      handed_over: 1,
      resolved_by_person: 1,
      no_answer: 0,
    });
    expect(res.body.days.map((d: { date: string }) => d.date)).toEqual([dayShift(-1), dayShift(0), dayShift(1)]);
    expect(res.body.days[1].conversations).toBe(6);
    expect(res.body.ratings).toEqual({ up: 1, down: 1 });
    expect(res.body.satisfaction).toEqual({
      answers: 1,
      average: 4,
      scores: [0, 0, 0, 1, 0],
      comments: [expect.objectContaining({ score: 4, comment })],
    });
    // The default period: the last 30 days, today included.
    const byDefault = await http(`/v1/dashboard/reports/resolution?bot_id=${bot.bot_id}`, { headers: owner });
    expect(byDefault.body.days).toHaveLength(30);
    expect(byDefault.body.totals.conversations).toBe(6);
  });

  it('refuses bad periods, other workspaces and operators', async () => {
    const ask = (q: string, headers = owner) => http(`/v1/dashboard/reports/resolution?${q}`, { headers });
    expect((await ask('time_zone=Mars/Olympus')).status).toBe(400);
    expect((await ask(`from=${dayShift(1)}&to=${dayShift(0)}`)).status).toBe(400);
    expect((await ask('from=2020-01-01&to=2026-01-01')).status).toBe(400);
    expect((await ask('from=2026-02-30')).status).toBe(400);
    const other = await newBot();
    expect((await ask(`bot_id=${other.bot_id}`)).status).toBe(404);
    expect((await http(`/v1/dashboard/bots/${other.bot_id}/gaps`, { headers: owner })).status).toBe(404);
    const operator = await sessionOf(await addMember(bot, 'operator'));
    expect((await ask('', operator)).status).toBe(403);
  });
});
