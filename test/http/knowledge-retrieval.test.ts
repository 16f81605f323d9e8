import { describe, expect, it } from '@jest/globals';
import { buildRetrievalQuery, retrievePassages } from '../../lib/knowledge/retrieve';
import { deleteSource, knowledgeVersion, upsertSource, type Embedder } from '../../lib/knowledge/store';
import { createDb } from '../../lib/db';
import { http, newBot, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

type Bot = Awaited<ReturnType<typeof newBot>>;

const write = (bot: Bot, body: unknown) => http('/v1/api/knowledge', { key: bot.keys.secret_key, body });

/** Company prose where "company" is everywhere and the mascot is mentioned once, deep inside. */
function companyHandbook(fact: string): string {
  const topics = ['history', 'offices', 'hiring', 'benefits', 'security', 'travel', 'equipment', 'holidays'];
  const paragraphs = topics.map((t, i) =>
    Array.from(
      { length: 6 },
      (_, j) => `The company ${t} policy, part ${j}, applies to every company employee in company office ${i}.`,
    ).join(' '),
  );
  paragraphs.splice(5, 0, fact);
  return paragraphs.join('\n\n');
}

describe('retrievePassages', () => {
  it('finds an English fact for a natural question, ahead of fragments that only repeat a common word', async () => {
    const bot = await newBot();
    const fact = 'Fun fact: the company mascot is a purple axolotl named Quentin.';
    expect((await write(bot, { source_id: 'handbook', title: 'Handbook', text: companyHandbook(fact) })).status).toBe(
      202,
    );
    expect(
      (await testDb().query(`SELECT fragment_count FROM knowledge_sources WHERE bot_id = $1`, [bot.bot_id])).rows[0]
        .fragment_count,
    ).toBeGreaterThan(3);

    for (const question of ['What is the company mascot?', "what's the mascot called", 'Tell me about mascots']) {
      const passages = await retrievePassages(testDb(), bot.bot_id, question);
      expect([question, passages[0]?.text]).toEqual([
        question,
        expect.stringContaining('purple axolotl named Quentin'),
      ]);
      expect(passages[0]).toMatchObject({ sourceId: 'handbook', title: 'Handbook', score: expect.any(Number) });
    }
  });

  it('finds a Russian fact for a natural question, across word forms and letter case', async () => {
    const bot = await newBot();
    await write(bot, {
      source_id: 'about-ru',
      title: 'О компании',
      text: [
        'Компания основана в 1999 году. Офис компании находится в центре города.',
        'Талисманом нашей компании является фиолетовый аксолотль по имени «Квентин».',
        'Доставка по всей стране занимает от трёх до пяти дней.',
      ].join('\n\n'),
    });
    await write(bot, { source_id: 'shipping-ru', text: 'Доставка бесплатна для заказов от 5000 рублей.' });
    for (const question of ['Как зовут талисман компании?', 'Какой у вас талисман?', 'ТАЛИСМАН']) {
      const passages = await retrievePassages(testDb(), bot.bot_id, question);
      expect([question, passages[0]?.text]).toEqual([question, expect.stringContaining('Квентин')]);
    }
    const delivery = await retrievePassages(testDb(), bot.bot_id, 'Сколько стоит доставка?');
    expect(delivery.map((p) => p.sourceId)).toContain('shipping-ru');
  });

  it('finds Japanese and Chinese facts through character bigrams, and ignores accents in Latin script', async () => {
    const bot = await newBot();
    await write(bot, {
      source_id: 'ja',
      text: '会社のマスコットは紫のウーパールーパーで、名前はクエンティンです。本社は東京にあります。',
    });
    await write(bot, { source_id: 'zh', text: '我们公司的吉祥物是一只紫色的美西螈，名叫昆汀。公司总部位于上海。' });
    await write(bot, { source_id: 'fr', text: 'Le café est ouvert du lundi au vendredi.' });
    expect((await retrievePassages(testDb(), bot.bot_id, '会社のマスコットは何ですか？'))[0]?.sourceId).toBe('ja');
    expect((await retrievePassages(testDb(), bot.bot_id, '公司的吉祥物是什么？'))[0]?.sourceId).toBe('zh');
    expect((await retrievePassages(testDb(), bot.bot_id, 'Quand le CAFE est-il ouvert ?'))[0]?.sourceId).toBe('fr');
  });

  it('returns nothing for a question made only of stopwords or punctuation, and respects limit', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'a', text: 'What is this? It is what it is.' });
    expect(await retrievePassages(testDb(), bot.bot_id, 'what is it')).toEqual([]);
    expect(await retrievePassages(testDb(), bot.bot_id, '?!… «»')).toEqual([]);
    for (let i = 0; i < 4; i++) await write(bot, { source_id: `r${i}`, text: `Refunds rule number ${i}.` });
    expect(await retrievePassages(testDb(), bot.bot_id, 'refunds', { limit: 2 })).toHaveLength(2);
  });

  it("a bot never retrieves another bot's fragments", async () => {
    const a = await newBot();
    const b = await newBot();
    const c = await newBot();
    await write(a, { source_id: 'mascot', text: 'The company mascot is a purple axolotl named Quentin.' });
    await write(b, { source_id: 'mascot-b', text: 'The company mascot is a green frog named Fred.' });
    const forB = await retrievePassages(testDb(), b.bot_id, 'company mascot axolotl Quentin');
    expect(forB.map((p) => p.sourceId)).toEqual(['mascot-b']);
    expect(forB[0].text).not.toContain('Quentin');
    expect(await retrievePassages(testDb(), c.bot_id, 'company mascot axolotl Quentin')).toEqual([]);
    // With an embedding too: the vector branch filters by bot as well.
    const hybrid = await retrievePassages(testDb(), c.bot_id, 'mascot', { queryEmbedding: [1, 0, 0] });
    expect(hybrid).toEqual([]);
  });

  it('finds nothing of a deleted source', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'gone', text: 'The vault code is 1234.' });
    expect(await retrievePassages(testDb(), bot.bot_id, 'vault code')).toHaveLength(1);
    await http('/v1/api/knowledge/gone', { key: bot.keys.secret_key, method: 'DELETE' });
    expect(await retrievePassages(testDb(), bot.bot_id, 'vault code')).toEqual([]);
  });
});

describe('knowledge_version (the answer cache key)', () => {
  it('is bumped by every write, replacement and delete, and by nothing else', async () => {
    const bot = await newBot();
    const db = testDb();
    const v0 = await knowledgeVersion(db, bot.bot_id);
    await write(bot, { source_id: 'x', text: 'One.' });
    await write(bot, { source_id: 'x', text: 'Two.' });
    await write(bot, { text: 'Three.' });
    expect(await knowledgeVersion(db, bot.bot_id)).toBe(v0 + 3);
    await http('/v1/api/knowledge', { key: bot.keys.secret_key }); // a read
    await write(bot, { text: '' }); // refused
    expect(await knowledgeVersion(db, bot.bot_id)).toBe(v0 + 3);
    expect(await deleteSource(db, bot.bot_id, 'x')).toBe(true);
    expect(await deleteSource(db, bot.bot_id, 'x')).toBe(false);
    expect(await knowledgeVersion(db, bot.bot_id)).toBe(v0 + 4);
  });
});

describe('with an embedder', () => {
  // A deterministic stand-in for a real embedding model: one dimension per concept, synonyms share a dimension.
  const CONCEPTS = [
    ['car', 'cars', 'automobile', 'vehicle', 'rental'],
    ['refund', 'refunds', 'money', 'back', 'reimbursement'],
    ['mascot', 'axolotl', 'quentin'],
  ];
  const vectorOf = (text: string): number[] => {
    const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
    return CONCEPTS.map((group) => words.filter((w) => group.includes(w)).length + 0.01);
  };
  const fakeEmbed: Embedder = async (texts) => texts.map(vectorOf);

  it('stores unit-length vectors and brings in passages full text alone would miss', async () => {
    const bot = await newBot();
    const db = testDb();
    await upsertSource(
      db,
      { botId: bot.bot_id, sourceId: 'cars', text: 'We rent cars by the day.' },
      { embed: fakeEmbed },
    );
    await upsertSource(
      db,
      { botId: bot.bot_id, sourceId: 'refunds', text: 'Refunds take five days.' },
      { embed: fakeEmbed },
    );
    const rows = await db.query<{ embedding: number[] }>(
      `SELECT embedding FROM knowledge_fragments WHERE bot_id = $1 ORDER BY source_id`,
      [bot.bot_id],
    );
    expect(rows.rows).toHaveLength(2);
    for (const { embedding } of rows.rows) {
      expect(embedding).toHaveLength(CONCEPTS.length);
      expect(Math.hypot(...embedding)).toBeCloseTo(1, 5);
    }

    const question = 'Can I get an automobile?';
    expect(await retrievePassages(db, bot.bot_id, question)).toEqual([]); // no shared word
    const hybrid = await retrievePassages(db, bot.bot_id, question, { queryEmbedding: vectorOf(question) });
    expect(hybrid[0]).toMatchObject({ sourceId: 'cars', text: 'We rent cars by the day.' });
  });

  it('fuses both rankings: a passage both agree on comes first', async () => {
    const bot = await newBot();
    const db = testDb();
    const texts = {
      a: 'Our mascot Quentin is an axolotl.', // lexical and semantic
      b: 'Mascot costumes: see car rental.', // lexical too, but semantically about cars
      c: 'Axolotl Quentin lives in the lobby.', // semantic only
    };
    for (const [id, text] of Object.entries(texts)) {
      await upsertSource(db, { botId: bot.bot_id, sourceId: id, text }, { embed: fakeEmbed });
    }
    const q = 'Who is the mascot?';
    const ranked = await retrievePassages(db, bot.bot_id, q, { queryEmbedding: vectorOf(q) });
    expect(ranked[0].sourceId).toBe('a');
    expect(ranked.map((p) => p.sourceId).sort()).toEqual(['a', 'b', 'c']);
  });

  it('re-embeds an unchanged source when it was written without embeddings before', async () => {
    const bot = await newBot();
    const db = testDb();
    await upsertSource(db, { botId: bot.bot_id, sourceId: 'cars', text: 'We rent cars.' });
    await upsertSource(db, { botId: bot.bot_id, sourceId: 'cars', text: 'We rent cars.' }, { embed: fakeEmbed });
    const res = await db.query(`SELECT embedding IS NOT NULL AS embedded FROM knowledge_fragments WHERE bot_id = $1`, [
      bot.bot_id,
    ]);
    expect(res.rows).toEqual([{ embedded: true }]);
  });

  it('refuses an embedder that returns the wrong number of vectors, and writes nothing', async () => {
    const bot = await newBot();
    const broken: Embedder = async () => [];
    await expect(
      upsertSource(testDb(), { botId: bot.bot_id, sourceId: 'x', text: 'Hello.' }, { embed: broken }),
    ).rejects.toThrow(/vectors/);
    expect((await testDb().query(`SELECT 1 FROM knowledge_sources WHERE bot_id = $1`, [bot.bot_id])).rowCount).toBe(0);
  });
});

describe('the retrieval query and its index', () => {
  // What this proves: for a bot with about a thousand fragments and fresh statistics, the planner reads each word's
  // postings from the covering (term, impact) index, in the plan for these values and in the generic plan
  // a prepared statement settles on, and reads no table whole. (Before BM25 this asserted a bitmap scan of the
  // (bot_id, tsv) GIN index, which ranking no longer uses: docs/decisions/147-bm25-in-postgres.md.)
  it("each word's postings are one scan of the impact index, whichever plan the prepared statement uses", async () => {
    const db = testDb();
    const idx = await db.query<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes
        WHERE tablename = 'knowledge_postings' AND indexname = 'knowledge_postings_impact_idx'`,
    );
    expect(idx.rows[0]?.indexdef).toMatch(/\(term, impact DESC\) INCLUDE \(doc, tf, len\)/);

    // A bot with about a thousand fragments beside two small ones, then fresh statistics, so the plan is the one a
    // real base gets.
    const bots = [await newBot(), await newBot(), await newBot()];
    const words =
      'river mountain ocean forest desert valley canyon meadow glacier island harbor bridge tower garden'.split(' ');
    for (const [b, bot] of bots.entries()) {
      for (let s = 0; s < (b === 0 ? 10 : 1); s++) {
        const text = Array.from(
          { length: 4000 },
          (_, i) => `The ${words[(i * 7 + s + b) % words.length]} is number ${i}.`,
        ).join(' ');
        await upsertSource(db, {
          botId: bot.bot_id,
          sourceId: `s${s}`,
          text: s === 3 ? `${text} The company mascot is Quentin.` : text,
        });
      }
    }
    const fragments = await db.query(`SELECT count(*)::int AS n FROM knowledge_fragments WHERE bot_id = $1`, [
      bots[0].bot_id,
    ]);
    expect(fragments.rows[0].n).toBeGreaterThan(900);
    await db.query(
      'ANALYZE knowledge_postings, knowledge_terms, knowledge_stats, knowledge_sources, knowledge_fragments',
    );

    const { text, values } = buildRetrievalQuery(bots[0].bot_id, 'What is the company mascot?');
    // The plan for these values, and the generic plan a prepared statement settles on after five runs (the statement
    // is prepared: next test).
    const client = await db.connect();
    try {
      await client.query('BEGIN');
      await client.query(`PREPARE retrieval_plan AS ${text}`);
      for (const mode of ['force_custom_plan', 'force_generic_plan']) {
        await client.query(`SET LOCAL plan_cache_mode = ${mode}`);
        // EXECUTE takes no bound parameters: the values go in as literals.
        const args = values.map((v) => (typeof v === 'number' ? String(v) : client.escapeLiteral(String(v))));
        const plan = await client.query(`EXPLAIN (VERBOSE, FORMAT JSON) EXECUTE retrieval_plan(${args.join(', ')})`);
        type PlanNode = { 'Node Type': string; 'Relation Name'?: string; 'Index Name'?: string } & Record<
          string,
          unknown
        >;
        const nodes: PlanNode[] = [];
        /** What a node computes for each row it passes (its output, conditions and sort keys), outside InitPlans. */
        const perRow: string[] = [];
        const walk = (n: PlanNode, once: boolean) => {
          nodes.push(n);
          if (!once)
            for (const key of ['Output', 'Filter', 'Index Cond', 'Recheck Cond', 'Sort Key', 'Hash Cond'])
              perRow.push(...[n[key] ?? []].flat().map(String));
          for (const child of (n.Plans as PlanNode[] | undefined) ?? [])
            walk(child, once || child['Parent Relationship'] === 'InitPlan');
        };
        walk(plan.rows[0]['QUERY PLAN'][0].Plan, false);
        // The question's words are computed once per retrieval (in a CTE), not once for every posting it reads.
        expect(perRow.filter((e) => e.includes('to_tsvector'))).toEqual([]);
        expect(nodes).toContainEqual(
          expect.objectContaining({
            'Node Type': expect.stringMatching(/^Index (Only )?Scan$/),
            'Index Name': 'knowledge_postings_impact_idx',
          }),
        );
        const tables = ['knowledge_postings', 'knowledge_terms', 'knowledge_fragments'];
        expect(
          nodes.filter((n) => n['Node Type'] === 'Seq Scan' && tables.includes(String(n['Relation Name']))),
        ).toEqual([]);
      }
    } finally {
      await client.query('ROLLBACK');
      await client.query('DEALLOCATE retrieval_plan');
      client.release();
    }
    // And it finds the one fragment that answers.
    const passages = await retrievePassages(db, bots[0].bot_id, 'What is the company mascot?');
    expect(new Set(passages.map((p) => p.sourceId))).toEqual(new Set(['s3']));
  });

  it('is prepared once per connection, not parsed and planned for every question', async () => {
    // A chat turn runs it: unprepared, Postgres spent ≈ 0.3 ms of CPU on each, ≈ 0.06 prepared.
    const db = createDb(stackInfo().databaseUrl, { max: 1, applicationName: 'jest' });
    try {
      const bot = await newBot();
      for (const question of ['Where is the office?', 'Who is the mascot?'])
        await retrievePassages(db, bot.bot_id, question);
      const prepared = await db.query<{ name: string }>(`SELECT name FROM pg_prepared_statements`);
      expect(prepared.rows.map((r) => r.name)).toEqual(['retrieve-full-text']);
    } finally {
      await db.end();
    }
  });
});
