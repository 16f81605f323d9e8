import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { LIMITS } from '../../lib/limits';
import { retrievePassages } from '../../lib/knowledge/retrieve';
import { knowledgeCheckWorkflowId } from '../../workflows/contracts/knowledge-check';
import {
  type OwnPlatform,
  http,
  newBot,
  ownerSession,
  startOwnPlatform,
  testDb,
  useTemporalClient,
  waitUntil,
} from '../support/helpers';
import { addMember, sessionOf } from '../support/members';

/**
 * The owner's check of an agent (issue 41, item 7; docs/decisions/155-owner-check.md): test questions with the source that
 * should answer each, kept per agent under its limits; "run the check" puts them all through the chat's retrieval in
 * one workflow and records where each expected source came among the first five passages, a miss, or a source that is
 * gone; one run at a time; the runs list with their scores; roles.
 */
const temporal = useTemporalClient();

type Headers = Record<string, string>;
const questionsOf = (botId: string) => `/v1/dashboard/bots/${botId}/checks/questions`;
const runsOf = (botId: string) => `/v1/dashboard/bots/${botId}/checks/runs`;

async function write(bot: BootstrapResult, source_id: string, title: string, text: string, baseUrl?: string) {
  const res = await http('/v1/api/knowledge', { key: bot.keys.secret_key, body: { source_id, title, text }, baseUrl });
  expect(res.status).toBe(202);
}

async function addQuestion(botId: string, headers: Headers, body: object, baseUrl?: string) {
  const res = await http(questionsOf(botId), { headers, body, baseUrl });
  expect([res.status, res.text]).toEqual([201, expect.any(String)]);
  return res.body as { id: string; question: string };
}

/** Starts a run and waits until it has ended; returns its details. */
async function runToEnd(botId: string, headers: Headers, baseUrl?: string, timeoutMs = 30_000) {
  const started = await http(runsOf(botId), { method: 'POST', headers, baseUrl });
  expect([started.status, started.text]).toEqual([202, expect.any(String)]);
  return waitUntil(
    'the check to end',
    async () => {
      const run = await http(`${runsOf(botId)}/${started.body.id}`, { headers, baseUrl });
      return run.body.status !== 'running' && run.body;
    },
    timeoutMs,
  );
}

describe('test questions', () => {
  let bot: BootstrapResult;
  let owner: Headers;

  beforeAll(async () => {
    bot = await newBot();
    owner = await ownerSession(bot);
    await write(bot, 'shipping', 'Shipping times', 'Parcels ship within two days.');
    await write(bot, 'warranty', 'Warranty', 'The warranty covers two years.');
  });

  it('are added, listed, changed and deleted; the expected source must exist', async () => {
    const added = await http(questionsOf(bot.bot_id), {
      headers: owner,
      body: { question: '  How fast do parcels ship?  ', expected_source_id: 'shipping', note: 'Asked daily' },
    });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({
      id: expect.stringMatching(/^chq_/),
      question: 'How fast do parcels ship?',
      expected_source_id: 'shipping',
      expected_source_title: 'Shipping times',
      note: 'Asked daily',
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    const id = added.body.id as string;

    const missing = await http(questionsOf(bot.bot_id), {
      headers: owner,
      body: { question: 'Do you ship to Mars?', expected_source_id: 'no-such-source' },
    });
    expect([missing.status, missing.body.code]).toEqual([400, 'bad_request']);
    expect(missing.body.error).toContain('expected_source_id');
    // The same question again, in other case and spacing.
    const twice = await http(questionsOf(bot.bot_id), {
      headers: owner,
      body: { question: 'how fast do   parcels ship?', expected_source_id: 'warranty' },
    });
    expect([twice.status, twice.body.code]).toEqual([409, 'conflict']);

    const changed = await http(`${questionsOf(bot.bot_id)}/${id}`, {
      method: 'PATCH',
      headers: owner,
      body: { expected_source_id: 'warranty', note: null },
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ id, expected_source_id: 'warranty', expected_source_title: 'Warranty' });
    expect(changed.body.note).toBeNull();
    const toNowhere = await http(`${questionsOf(bot.bot_id)}/${id}`, {
      method: 'PATCH',
      headers: owner,
      body: { expected_source_id: 'gone' },
    });
    expect([toNowhere.status, toNowhere.body.code]).toEqual([400, 'bad_request']);
    const empty = await http(`${questionsOf(bot.bot_id)}/${id}`, { method: 'PATCH', headers: owner, body: {} });
    expect(empty.status).toBe(400);

    const list = await http(questionsOf(bot.bot_id), { headers: owner });
    expect(list.status).toBe(200);
    expect(list.body.limits).toEqual({
      questions: LIMITS.checks.questions,
      question_chars: LIMITS.checks.questionChars,
      note_chars: LIMITS.checks.noteChars,
    });
    expect(list.body.questions).toEqual([changed.body]);

    // A source deleted later keeps its question, which says the source is gone.
    expect((await http('/v1/api/knowledge/warranty', { method: 'DELETE', key: bot.keys.secret_key })).status).toBe(200);
    const after = await http(questionsOf(bot.bot_id), { headers: owner });
    expect(after.body.questions).toEqual([expect.objectContaining({ id, expected_source_title: null })]);

    const deleted = await http(`${questionsOf(bot.bot_id)}/${id}`, { method: 'DELETE', headers: owner });
    expect(deleted.body).toEqual({ status: 'deleted', id });
    expect((await http(`${questionsOf(bot.bot_id)}/${id}`, { method: 'DELETE', headers: owner })).status).toBe(404);
    expect((await http(questionsOf(bot.bot_id), { headers: owner })).body.questions).toEqual([]);
  });

  it('keep to their limits: the question and note lengths, and the count per agent', async () => {
    const other = await newBot();
    const headers = await ownerSession(other);
    await write(other, 'a', 'A', 'Anything at all.');
    const { questionChars, noteChars, questions } = LIMITS.checks;
    const ask = (question: string, note?: string) =>
      http(questionsOf(other.bot_id), { headers, body: { question, expected_source_id: 'a', note } });

    expect((await ask(`${'q'.repeat(questionChars - 1)}?`)).status).toBe(201);
    expect((await ask(`${'r'.repeat(questionChars)}?`)).status).toBe(400);
    expect((await ask('Note at its limit?', 'n'.repeat(noteChars))).status).toBe(201);
    expect((await ask('Note over its limit?', 'n'.repeat(noteChars + 1))).status).toBe(400);
    expect((await ask('   ')).status).toBe(400);

    for (let i = 3; i <= questions; i++) expect((await ask(`Question number ${i}?`)).status).toBe(201);
    const full = await ask('One too many?');
    expect([full.status, full.body.code]).toEqual([400, 'bad_request']);
    expect(full.body.error).toContain(String(questions));
    const list = await http(questionsOf(other.bot_id), { headers });
    expect(list.body.questions).toHaveLength(questions);
  }, 60_000);

  it('are the agent’s own: another workspace gets 404, operators read, admins write', async () => {
    const stranger = await ownerSession(await newBot());
    expect((await http(questionsOf(bot.bot_id), { headers: stranger })).status).toBe(404);
    expect((await http(runsOf(bot.bot_id), { headers: stranger })).status).toBe(404);
    expect((await http(runsOf(bot.bot_id), { method: 'POST', headers: stranger })).status).toBe(404);

    const mine = await addQuestion(bot.bot_id, owner, { question: 'Shipping speed?', expected_source_id: 'shipping' });
    const operator = await sessionOf(await addMember(bot, 'operator'));
    expect((await http(questionsOf(bot.bot_id), { headers: operator })).body.questions).toHaveLength(1);
    expect((await http(runsOf(bot.bot_id), { headers: operator })).status).toBe(200);
    const refused = [
      await http(questionsOf(bot.bot_id), {
        headers: operator,
        body: { question: 'Mine?', expected_source_id: 'shipping' },
      }),
      await http(`${questionsOf(bot.bot_id)}/${mine.id}`, { method: 'PATCH', headers: operator, body: { note: 'x' } }),
      await http(`${questionsOf(bot.bot_id)}/${mine.id}`, { method: 'DELETE', headers: operator }),
      await http(runsOf(bot.bot_id), { method: 'POST', headers: operator }),
    ];
    expect(refused.map((r) => [r.status, r.body.code])).toEqual(Array(4).fill([403, 'forbidden']));

    const admin = await sessionOf(await addMember(bot, 'admin'));
    const changed = await http(`${questionsOf(bot.bot_id)}/${mine.id}`, {
      method: 'PATCH',
      headers: admin,
      body: { question: 'How quickly do parcels ship?' },
    });
    expect(changed.body).toMatchObject({ question: 'How quickly do parcels ship?', expected_source_id: 'shipping' });
  });
});

describe('running the check', () => {
  let bot: BootstrapResult;
  let owner: Headers;

  beforeAll(async () => {
    bot = await newBot();
    owner = await ownerSession(bot);
    await write(bot, 'shipping', 'Shipping times', 'Parcels ship within two days of your order.');
    await write(bot, 'warranty', 'Warranty', 'The warranty covers two years of repairs.');
    await write(bot, 'returns-policy', 'Returns policy', 'Returns are free within 30 days: send the item back.');
    await write(
      bot,
      'returns-faq',
      'Returns',
      'Returns: returns are free. Free returns, easy returns, returns of gifts.',
    );
  });

  it('finds each expected source at its rank, reports a miss and a source that is gone, and scores the run', async () => {
    expect((await http(runsOf(bot.bot_id), { method: 'POST', headers: owner })).status).toBe(400); // no question yet
    const fast = await addQuestion(bot.bot_id, owner, {
      question: 'How fast do parcels ship?',
      expected_source_id: 'shipping',
    });
    // The policy answers it, but the FAQ says "returns" more often: it comes first.
    const second = await addQuestion(bot.bot_id, owner, {
      question: 'Are returns free?',
      expected_source_id: 'returns-policy',
    });
    const miss = await addQuestion(bot.bot_id, owner, {
      question: 'What is your phone number?',
      expected_source_id: 'shipping',
    });
    const gone = await addQuestion(bot.bot_id, owner, {
      question: 'How long is the warranty?',
      expected_source_id: 'warranty',
    });
    expect((await http('/v1/api/knowledge/warranty', { method: 'DELETE', key: bot.keys.secret_key })).status).toBe(200);

    const run = await runToEnd(bot.bot_id, owner);
    expect(run).toMatchObject({
      id: expect.stringMatching(/^chk_/),
      status: 'done',
      total: 4,
      checked: 4,
      found: 2,
      missing: 1,
      score: 0.5,
      error: null,
      finished_at: expect.any(Number),
      workflow_id: knowledgeCheckWorkflowId(bot.bot_id, run.id),
    });
    const byQuestion = Object.fromEntries(run.results.map((r: { question_id: string }) => [r.question_id, r]));
    expect(run.results.map((r: { question_id: string }) => r.question_id)).toEqual([
      fast.id,
      second.id,
      miss.id,
      gone.id,
    ]);

    expect(byQuestion[fast.id]).toMatchObject({ outcome: 'found', rank: 1, expected_source_title: 'Shipping times' });
    expect(byQuestion[fast.id].passages[0]).toEqual({
      source_id: 'shipping',
      title: 'Shipping times',
      excerpt: 'Parcels ship within two days of your order.',
    });

    // The rank is where the chat's own retrieval puts the source's first passage.
    const retrieved = await retrievePassages(testDb(), bot.bot_id, 'Are returns free?', { limit: 5 });
    const expectedRank = retrieved.findIndex((p) => p.sourceId === 'returns-policy') + 1;
    expect(expectedRank).toBeGreaterThan(1);
    expect(byQuestion[second.id]).toMatchObject({ outcome: 'found', rank: expectedRank });
    expect(byQuestion[second.id].passages.map((p: { source_id: string }) => p.source_id)).toEqual(
      retrieved.map((p) => p.sourceId),
    );

    expect(byQuestion[miss.id]).toMatchObject({ outcome: 'not_found', rank: null, question: miss.question });
    expect(byQuestion[gone.id]).toMatchObject({
      outcome: 'source_missing',
      rank: null,
      expected_source_title: null,
    });

    // The trend: runs newest first with their scores. The knowledge improves, and so does the next run's score.
    await write(bot, 'contact', 'Contact', 'Our phone number is +372 555 0101.');
    expect(
      (
        await http(`${questionsOf(bot.bot_id)}/${miss.id}`, {
          method: 'PATCH',
          headers: owner,
          body: { expected_source_id: 'contact' },
        })
      ).status,
    ).toBe(200);
    const next = await runToEnd(bot.bot_id, owner);
    expect(next).toMatchObject({ status: 'done', found: 3, score: 0.75 });
    const runs = await http(runsOf(bot.bot_id), { headers: owner });
    expect(runs.status).toBe(200);
    expect(runs.body.running).toBe(false);
    expect(runs.body.runs.map((r: { id: string; score: number }) => [r.id, r.score])).toEqual([
      [next.id, 0.75],
      [run.id, 0.5],
    ]);
    // A past run keeps the question as it checked it.
    const past = await http(`${runsOf(bot.bot_id)}/${run.id}`, { headers: owner });
    expect(past.body.results[2]).toMatchObject({ expected_source_id: 'shipping', outcome: 'not_found' });
    expect((await http(`${runsOf(bot.bot_id)}/chk_nope`, { headers: owner })).status).toBe(404);

    // Ops find the agent's checks in the Temporal UI by its BotId.
    await waitUntil('the runs to be visible by BotId', async () => {
      const found: string[] = [];
      for await (const wf of temporal.workflow.list({
        query: `WorkflowType = 'knowledgeCheckWorkflow' AND BotId = '${bot.bot_id}'`,
      })) {
        found.push(wf.workflowId);
      }
      return found.length === 2 && found.sort().join() === [run.workflow_id, next.workflow_id].sort().join();
    });
  }, 90_000);

  it('a run left running by a workflow that stopped is recorded as failed, and blocks no new run', async () => {
    const other = await newBot();
    const headers = await ownerSession(other);
    await write(other, 'a', 'A', 'Anything at all.');
    await addQuestion(other.bot_id, headers, { question: 'Anything?', expected_source_id: 'a' });
    // As a workflow terminated by ops leaves it: `running`, no workflow, started a while ago.
    await testDb().query(
      `INSERT INTO check_runs (id, bot_id, status, total, started_at) VALUES ($1, $2, 'running', 1, now() - interval '1 minute')`,
      ['chk_stopped', other.bot_id],
    );
    const run = await runToEnd(other.bot_id, headers);
    expect(run).toMatchObject({ status: 'done', found: 1, score: 1 });
    const runs = await http(runsOf(other.bot_id), { headers });
    expect(runs.body.runs).toEqual([
      expect.objectContaining({ id: run.id }),
      expect.objectContaining({ id: 'chk_stopped', status: 'failed', error: 'The check stopped without finishing' }),
    ]);
  });
});

describe('with embeddings configured', () => {
  let own: OwnPlatform;
  let baseUrl: string;

  beforeAll(async () => {
    own = await startOwnPlatform('owner-check', { EMBEDDING_MODEL: 'fake-embed' });
    baseUrl = own.baseUrl;
  }, 120_000);

  afterAll(async () => own?.stop());

  it('checks with the question embedded, shows progress while it runs, and runs one check at a time', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    await write(bot, 'mascot', 'Mascot', 'The company mascot is a purple axolotl named Quentin.', baseUrl);
    // Only stopwords: full text alone finds nothing, so the source can only be found by the question's embedding.
    expect(await retrievePassages(testDb(), bot.bot_id, 'Who is she?')).toEqual([]);
    await addQuestion(bot.bot_id, owner, { question: 'Who is she?', expected_source_id: 'mascot' }, baseUrl);
    // Eleven more; the eleventh's embedding is slow (the fake model waits), so the second batch takes a while.
    for (let i = 2; i <= 12; i++) {
      const question = i === 11 ? `Slow question [[fake:slow-3000]]` : `Question number ${i}?`;
      await addQuestion(bot.bot_id, owner, { question, expected_source_id: 'mascot' }, baseUrl);
    }

    const started = await http(runsOf(bot.bot_id), { method: 'POST', headers: owner, baseUrl });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', total: 12, score: null });
    const again = await http(runsOf(bot.bot_id), { method: 'POST', headers: owner, baseUrl });
    expect([again.status, again.body.code]).toEqual([409, 'conflict']);

    // Progress: the first batch of ten is recorded while the second is still being checked.
    const midway = await waitUntil('the first batch to be recorded', async () => {
      const runs = await http(runsOf(bot.bot_id), { headers: owner, baseUrl });
      const run = runs.body.runs[0];
      return run.status === 'running' && run.checked > 0 && runs.body;
    });
    expect(midway.running).toBe(true);
    expect(midway.runs[0]).toMatchObject({ id: started.body.id, checked: 10, total: 12 });
    const detail = await http(`${runsOf(bot.bot_id)}/${started.body.id}`, { headers: owner, baseUrl });
    expect(detail.body.results.map((r: { outcome: string }) => r.outcome).slice(10)).toEqual(['pending', 'pending']);

    const done = await waitUntil(
      'the check to end',
      async () => {
        const run = await http(`${runsOf(bot.bot_id)}/${started.body.id}`, { headers: owner, baseUrl });
        return run.body.status === 'done' && run.body;
      },
      30_000,
    );
    expect(done.results[0]).toMatchObject({ outcome: 'found', rank: 1 });
    expect(done.results[0].passages[0]).toMatchObject({ source_id: 'mascot', title: 'Mascot' });
    // Once it has ended, the next run may start.
    expect((await http(runsOf(bot.bot_id), { method: 'POST', headers: owner, baseUrl })).status).toBe(202);
  }, 90_000);
});
