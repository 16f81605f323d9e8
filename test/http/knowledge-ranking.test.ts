import { describe, expect, it } from '@jest/globals';
import { retrievePassages } from '../../lib/knowledge/retrieve';
import { deleteSource } from '../../lib/knowledge/store';
import { docOrdinalSql, docSeqSql, TITLE_WEIGHT } from '../../lib/knowledge/term-stats';
import { http, newBot, testDb } from '../support/helpers';

type Bot = Awaited<ReturnType<typeof newBot>>;

const write = (bot: Bot, body: unknown) => http('/v1/api/knowledge', { key: bot.keys.secret_key, body });
const remove = (bot: Bot, id: string) =>
  http(`/v1/api/knowledge/${encodeURIComponent(id)}`, { key: bot.keys.secret_key, method: 'DELETE' });

/** The bot's BM25 statistics as stored (lib/knowledge/term-stats.ts). */
async function stored(botId: string) {
  const db = testDb();
  const [stats, terms, postings] = await Promise.all([
    db.query(`SELECT fragments::int, length::int FROM knowledge_stats WHERE bot_id = $1`, [botId]),
    db.query(`SELECT lexeme, df FROM knowledge_terms WHERE bot_id = $1 ORDER BY lexeme`, [botId]),
    db.query(
      `SELECT s.source_id, ${docOrdinalSql('p.doc')} AS ordinal, t.lexeme, p.tf, p.len
         FROM knowledge_postings p
         JOIN knowledge_terms t ON t.id = p.term
         JOIN knowledge_sources s ON s.bot_id = t.bot_id AND s.seq = ${docSeqSql('p.doc')}
        WHERE t.bot_id = $1 ORDER BY 1, 2, 3`,
      [botId],
    ),
  ]);
  return { stats: stats.rows[0] ?? null, terms: terms.rows, postings: postings.rows };
}

/**
 * The same statistics counted afresh from the fragments' tsv, as they are now: a word's frequency is its number of
 * positions, those of the title and headings (weight C) counted TITLE_WEIGHT times.
 */
async function recounted(botId: string) {
  const db = testDb();
  const words = `SELECT f.source_id, f.ordinal, u.lexeme,
                        (SELECT sum(CASE WHEN w = 'C' THEN ${TITLE_WEIGHT} ELSE 1 END)::int
                           FROM unnest(coalesce(u.weights, '{D}')) AS w) AS tf
                   FROM knowledge_fragments f CROSS JOIN LATERAL unnest(f.tsv) AS u WHERE f.bot_id = $1`;
  const [stats, terms, postings] = await Promise.all([
    db.query(
      `SELECT count(DISTINCT (source_id, ordinal))::int AS fragments, sum(tf)::int AS length FROM (${words}) w`,
      [botId],
    ),
    db.query(`SELECT lexeme, count(*)::int AS df FROM (${words}) w GROUP BY lexeme ORDER BY lexeme`, [botId]),
    db.query(
      `SELECT source_id, ordinal, lexeme, tf, (sum(tf) OVER (PARTITION BY source_id, ordinal))::int AS len
         FROM (${words}) w ORDER BY 1, 2, 3`,
      [botId],
    ),
  ]);
  return {
    stats: stats.rows[0].fragments ? stats.rows[0] : { fragments: 0, length: 0 },
    terms: terms.rows,
    postings: postings.rows,
  };
}

describe('BM25 ranking', () => {
  it('ranks a rare word above words found in every other passage (inverse document frequency)', async () => {
    const bot = await newBot();
    // "policy" and "office" are in twelve passages of thirteen; "refund" is in one, once, without either of them.
    for (let i = 0; i < 12; i++) {
      const topic = ['travel', 'hiring', 'security', 'equipment', 'holidays', 'parking'][i % 6];
      await write(bot, {
        source_id: `policy-${String(i).padStart(2, '0')}`,
        text: `The ${topic} policy of each office: the office manager keeps the policy.`,
      });
    }
    await write(bot, { source_id: 'refunds', text: 'A refund is paid within five days.' });
    // Ranked without idf, two common words matched beat one rare word.
    for (const question of ['What is the refund policy of the office?', 'office policy refund']) {
      const passages = await retrievePassages(testDb(), bot.bot_id, question);
      expect([question, passages[0]?.sourceId]).toEqual([question, 'refunds']);
    }
  });

  it('prefers the shorter of two passages that mention a word equally (length normalization)', async () => {
    const bot = await newBot();
    const filler = Array.from(
      { length: 60 },
      (_, i) => `Section ${i} describes opening hours, parking, lockers, lifts and the cafeteria menu.`,
    ).join(' ');
    // Written first and named first: ranked without length normalization, a tie would put it ahead.
    await write(bot, { source_id: 'a-handbook', title: 'Handbook', text: `The warranty covers two years. ${filler}` });
    await write(bot, { source_id: 'b-warranty', title: 'Terms', text: 'The warranty covers two years of repairs.' });
    const passages = await retrievePassages(testDb(), bot.bot_id, 'How long is the warranty?');
    expect(passages.map((p) => p.sourceId)).toEqual(['b-warranty', 'a-handbook']);
    expect(passages[0].score).toBeGreaterThan(passages[1].score);
  });

  it('keeps its term statistics equal to a fresh count through writes, replacements, deletes and rewrites', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'a', title: 'Alpha', text: 'Apples and pears. Apples again.' });
    await write(bot, { source_id: 'b', text: 'Pears and plums.\n\nPlums in the second paragraph.' });
    await write(bot, { source_id: 'c', title: 'Gamma', text: 'Quinces only.' });
    expect(await stored(bot.bot_id)).toEqual(await recounted(bot.bot_id));
    expect((await stored(bot.bot_id)).terms).toContainEqual({ lexeme: 'pear', df: 2 });

    await write(bot, { source_id: 'a', title: 'Alpha', text: 'Cherries now, no more of the earlier fruit.' }); // replaced
    await write(bot, { source_id: 'b', text: 'Pears and plums.\n\nPlums in the second paragraph.' }); // unchanged
    expect((await remove(bot, 'c')).status).toBeLessThan(300);
    const after = await stored(bot.bot_id);
    expect(after).toEqual(await recounted(bot.bot_id));
    // Words only the replaced or deleted text had are gone, not left at zero.
    expect(after.terms.map((t: { lexeme: string }) => t.lexeme)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^(appl|quinc|gamma)$/)]),
    );
    expect(after.terms).toContainEqual({ lexeme: 'pear', df: 1 });

    // Everything deleted: the totals are zero and nothing is left.
    expect(await deleteSource(testDb(), bot.bot_id, 'a')).toBe(true);
    expect(await deleteSource(testDb(), bot.bot_id, 'b')).toBe(true);
    expect(await stored(bot.bot_id)).toEqual({ stats: { fragments: 0, length: 0 }, terms: [], postings: [] });
  });

  it('forgets a deleted bot’s statistics and postings', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'a', text: 'Apples and pears.' });
    expect((await stored(bot.bot_id)).postings.length).toBeGreaterThan(0);
    const ids = await testDb().query(`SELECT array_agg(id) AS ids FROM knowledge_terms WHERE bot_id = $1`, [
      bot.bot_id,
    ]);
    // What the bots service's remove runs once the bot's outside resources are gone.
    await testDb().query(`DELETE FROM bots WHERE id = $1`, [bot.bot_id]);
    expect(await stored(bot.bot_id)).toEqual({ stats: null, terms: [], postings: [] });
    // Postings name their bot only through its terms: none is left under the deleted terms' ids.
    const left = await testDb().query(`SELECT count(*)::int AS n FROM knowledge_postings WHERE term = ANY ($1)`, [
      ids.rows[0].ids,
    ]);
    expect(left.rows[0].n).toBe(0);
  });

  it('counts right under concurrent writes and deletes of one bot', async () => {
    const bot = await newBot();
    const words = ['amber', 'basalt', 'cobalt', 'dolomite', 'emerald', 'feldspar', 'garnet', 'hematite'];
    const text = (i: number, round: number) =>
      Array.from(
        { length: 3 + ((i + round) % 4) },
        (_, j) => `${words[(i * 3 + j + round) % words.length]} stone.`,
      ).join(' ');
    // Twelve sources written at once, then rewritten (half of them) and deleted (a quarter) at once, interleaved.
    const first = await Promise.all(
      Array.from({ length: 12 }, (_, i) => write(bot, { source_id: `s${i}`, text: text(i, 0) })),
    );
    expect(first.map((r) => r.status)).toEqual(Array(12).fill(202));
    const second = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 4 === 3 ? remove(bot, `s${i}`) : write(bot, { source_id: `s${i}`, text: text(i, i % 2) }),
      ),
    );
    expect(second.every((r) => r.status < 300)).toBe(true);
    expect(await stored(bot.bot_id)).toEqual(await recounted(bot.bot_id));
  });

  it("never lets another bot's passages change this bot's statistics or scores", async () => {
    const a = await newBot();
    const b = await newBot();
    await write(a, { source_id: 'mascot', text: 'The company mascot is a purple axolotl named Quentin.' });
    await write(a, { source_id: 'office', text: 'The company office is in the city centre.' });
    const before = await retrievePassages(testDb(), a.bot_id, 'company mascot');
    const statsBefore = await stored(a.bot_id);
    // Another bot where "mascot" is everywhere and "company" nowhere: its counts would swing a shared statistic.
    for (let i = 0; i < 8; i++)
      await write(b, { source_id: `m${i}`, text: `Mascot ${i}: another mascot, mascot again.` });
    expect(await stored(a.bot_id)).toEqual(statsBefore);
    expect(await retrievePassages(testDb(), a.bot_id, 'company mascot')).toEqual(before);
    expect(before.map((p) => p.sourceId)).toEqual(['mascot', 'office']);
  });

  it('ranks a passage whose title or heading names the rare word above one that mentions it once in passing', async () => {
    const bot = await newBot();
    for (const [i, topic] of ['parking', 'lockers', 'lifts', 'canteen', 'badges', 'printers'].entries())
      await write(bot, {
        source_id: `filler-${i}`,
        title: 'Office guide',
        text: `The ${topic} of the office are described here, with the hours they are open each working day.`,
      });
    // "Refunds" is the heading of this section, whose body says what happens without repeating the word.
    await write(bot, {
      source_id: 'a-handbook',
      title: 'Customer handbook',
      text: '## Refunds\n\nThe money goes back to the card you paid with, within five working days after we receive the parcel.',
    });
    // Shorter, and it names the word once in its body: ranked as one field, it would come first.
    await write(bot, {
      source_id: 'b-shipping',
      title: 'Shipping notes',
      text: 'Parcels leave the warehouse daily; a refund is rare; couriers collect them at noon.',
    });
    for (const question of ['How do refunds work?', 'refund']) {
      const passages = await retrievePassages(testDb(), bot.bot_id, question);
      expect([question, passages.slice(0, 2).map((p) => p.sourceId)]).toEqual([question, ['a-handbook', 'b-shipping']]);
    }
    // A source's title is a field too.
    await write(bot, {
      source_id: 'c-warranty',
      title: 'Warranty',
      text: 'Every appliance is covered for two years from the day it was delivered to your door.',
    });
    await write(bot, {
      source_id: 'd-returns',
      title: 'Returns',
      text: 'Bring it back with its receipt; the warranty is separate.',
    });
    const warranty = await retrievePassages(testDb(), bot.bot_id, 'warranty');
    expect(warranty.slice(0, 2).map((p) => p.sourceId)).toEqual(['c-warranty', 'd-returns']);
  });

  it('ranks a source written without a title on its text alone: the first line it is listed under is no title', async () => {
    const bot = await newBot();
    expect(
      (await write(bot, { source_id: 'untitled', text: 'Warranty claims\nSend the form within a year.' })).status,
    ).toBe(202);
    await write(bot, { source_id: 'titled', title: 'Warranty', text: 'Claims are answered within a week.' });
    const listed = await http('/v1/api/knowledge/untitled', { key: bot.keys.secret_key });
    expect(listed.body.title).toBe('Warranty claims');
    // Each word of the untitled source once (its body), where a given title's words count TITLE_WEIGHT times more.
    const tf = (await stored(bot.bot_id)).postings
      .filter((p) => p.lexeme === 'warranti')
      .map((p) => [p.source_id, p.tf]);
    expect(tf).toEqual([
      ['titled', TITLE_WEIGHT],
      ['untitled', 1],
    ]);
  });

  it('indexes a hyphenated word by its parts, as with or without the hyphen', async () => {
    const bot = await newBot();
    await write(bot, { source_id: 'a', text: 'Trains on the high-speed line run every hour.' });
    await write(bot, { source_id: 'b', text: 'Trains on the high speed line run every hour.' });
    await write(bot, { source_id: 'c', text: 'Buses on the coast road run every hour.' });
    const terms = (await stored(bot.bot_id)).terms.map((t: { lexeme: string }) => t.lexeme);
    expect(terms).toEqual(expect.arrayContaining(['high', 'speed']));
    expect(terms.filter((t: string) => t.includes('-'))).toEqual([]);
    const scores = async (question: string) =>
      Object.fromEntries(
        (await retrievePassages(testDb(), bot.bot_id, question)).map((p) => [p.sourceId, p.score.toFixed(6)]),
      );
    const hyphenated = await scores('high-speed trains');
    // Both spellings of the passage score alike, for both spellings of the question.
    expect(hyphenated.a).toBe(hyphenated.b);
    expect(await scores('high speed trains')).toEqual(hyphenated);
  });
});
