import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { LIMITS } from '../../lib/limits';
import { http, newBot, ownerSession, rawRequest, testDb } from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { headingsDocx, makePdf, makePng, readingDone, twoPagePdf, uploadFile } from '../support/documents';

/**
 * Documents in (issue 41, items 1 and 2; docs/decisions/145-documents-in.md, 146-passages-keep-context.md): files uploaded
 * through the API, judged by their content, read by a workflow, split on their structure into passages that carry
 * their heading path and page; the errors an owner meets, each with a reason and nothing half-written.
 */

type Passage = { text: string; heading_path: string[]; page: number | null };

const key = (bot: BootstrapResult) => bot.keys.secret_key;

async function uploadAndRead(bot: BootstrapResult, file: { name: string; bytes: Buffer | string; type?: string }) {
  const res = await uploadFile(key(bot), file);
  expect(res.status).toBe(202);
  expect(res.body).toMatchObject({ status: 'reading', name: file.name, size: Buffer.byteLength(file.bytes) });
  return { accepted: res.body, source: await readingDone(key(bot), res.body.source_id) };
}

const passageWith = (passages: Passage[], words: string) => passages.find((p) => p.text.includes(words));

describe('files in, each format read on its structure', () => {
  it('a two-page PDF: passages carry their page and heading path; the original downloads as uploaded', async () => {
    const bot = await newBot();
    const pdf = await twoPagePdf();
    const { accepted, source } = await uploadAndRead(bot, { name: 'lamp.pdf', bytes: pdf });
    expect(accepted).toMatchObject({ format: 'pdf', content_type: 'application/pdf', replaced: false });
    expect(source).toMatchObject({
      status: 'indexed',
      reason: null,
      kind: 'file',
      origin: 'file',
      title: 'Lamp manual',
      file: { name: 'lamp.pdf', content_type: 'application/pdf', size: pdf.length, pages: 2 },
    });
    expect(passageWith(source.passages, 'Screw the bulb')).toEqual({
      text: expect.any(String),
      heading_path: ['Lamp manual', 'Installation'],
      page: 1,
    });
    expect(passageWith(source.passages, 'purple axolotl')).toMatchObject({
      heading_path: ['Lamp manual', 'Wi-Fi'],
      page: 2,
    });
    expect(source.fragments).toBe(source.passages.length);

    const download = await fetch(`${stackInfo().apiUrl}/v1/api/knowledge/${accepted.source_id}/file`, {
      headers: { 'X-Bot-Key': key(bot) },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toContain('attachment; filename="lamp.pdf"');
    expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);

    // The list says what each source is.
    const list = await http('/v1/api/knowledge', { key: key(bot) });
    expect(list.body.sources).toEqual([
      expect.objectContaining({ source_id: accepted.source_id, kind: 'file', status: 'indexed' }),
    ]);
  });

  it('a Word file with headings (named .pdf: judged by its content), its table rows read with their header', async () => {
    const bot = await newBot();
    const { accepted, source } = await uploadAndRead(bot, { name: 'kettle.pdf', bytes: await headingsDocx() });
    expect(accepted.format).toBe('docx');
    expect(source).toMatchObject({ status: 'indexed', title: 'Kettle guide', file: { pages: null } });
    expect(passageWith(source.passages, 'vinegar')).toMatchObject({
      heading_path: ['Kettle guide', 'Descaling'],
      page: null,
    });
    const parts = passageWith(source.passages, 'turquoise lid')!;
    expect(parts.heading_path).toEqual(['Kettle guide', 'Descaling', 'Spare parts']);
    expect(parts.text).toContain('Part: Turquoise lid; Price: 7 €');
  });

  it('Markdown: headings, lists and a table; sections never mixed in one passage', async () => {
    const bot = await newBot();
    const md = [
      '# Garden hose',
      '',
      'A hose for the garden.',
      '',
      '## Storage',
      '',
      '- Drain it before winter.',
      '- Hang it on the reel.',
      '',
      '## Prices',
      '',
      '| Length | Price |',
      '|---|---|',
      '| 15 m | 20 € |',
      '| 30 m | 35 € |',
    ].join('\n');
    const { accepted, source } = await uploadAndRead(bot, { name: 'hose.md', bytes: md, type: 'text/markdown' });
    expect(accepted.format).toBe('markdown');
    expect(source.passages).toEqual([
      { text: 'A hose for the garden.', heading_path: ['Garden hose'], page: null },
      {
        text: '- Drain it before winter.\n- Hang it on the reel.',
        heading_path: ['Garden hose', 'Storage'],
        page: null,
      },
      {
        text: 'Length: 15 m; Price: 20 €\nLength: 30 m; Price: 35 €',
        heading_path: ['Garden hose', 'Prices'],
        page: null,
      },
    ]);
  });

  it('HTML: the page chrome left out, headings and list items kept', async () => {
    const bot = await newBot();
    const html = `<!doctype html><html><head><title>Tent help</title></head><body>
      <nav>Home | Shop</nav>
      <main><h1>Tent help</h1><h2>Pitching</h2><p>Peg the corners first, then raise the orange poles.</p>
      <ul><li>Four pegs</li><li>Two poles</li></ul></main></body></html>`;
    const { accepted, source } = await uploadAndRead(bot, { name: 'tent.html', bytes: html });
    expect(accepted.format).toBe('html');
    expect(source.title).toBe('Tent help');
    expect(source.passages).toEqual([
      {
        text: 'Peg the corners first, then raise the orange poles.\n\n- Four pegs\n- Two poles',
        heading_path: ['Tent help', 'Pitching'],
        page: null,
      },
    ]);
    expect(source.text).not.toContain('Home | Shop');
  });

  it('a CSV price list: each row stands alone as "Header: value"', async () => {
    const bot = await newBot();
    const csv = 'Product;Price;Colour\nLamp;12 €;"warm; white"\nBulb;3 €;clear\n';
    const { accepted, source } = await uploadAndRead(bot, { name: 'prices.txt', bytes: csv });
    expect(accepted.format).toBe('csv');
    expect(source.passages.map((p: Passage) => p.text)).toEqual([
      'Product: Lamp; Price: 12 €; Colour: warm; white\nProduct: Bulb; Price: 3 €; Colour: clear',
    ]);
  });

  it('plain text: paragraphs and list items, findable by a question', async () => {
    const bot = await newBot();
    const text =
      'Opening hours\n\nThe vintage bicycle shop opens at nine.\n\n• Closed on Sundays\n• Open late on Fridays\n';
    const { accepted, source } = await uploadAndRead(bot, { name: 'hours', bytes: text });
    expect(accepted.format).toBe('text');
    expect(source.passages).toHaveLength(1);
    expect(source.passages[0].text).toContain('- Closed on Sundays');
    const chat = await http('/v1/api/chat', {
      key: key(bot),
      body: { session_id: randomUUID(), message: 'When does the vintage bicycle shop open?' },
    });
    expect(chat.status).toBe(200);
    expect(chat.body.sources).toEqual([expect.objectContaining({ source_id: accepted.source_id, title: 'hours' })]);
  });
});

describe('the answer names the page', () => {
  it("an answer from a PDF's second page says so in its sources", async () => {
    const bot = await newBot();
    const { accepted } = await uploadAndRead(bot, { name: 'lamp.pdf', bytes: await twoPagePdf() });
    const chat = await http('/v1/api/chat', {
      key: key(bot),
      body: { session_id: randomUUID(), message: 'How do I pair the purple axolotl lamp with my router?' },
    });
    expect(chat.status).toBe(200);
    expect(chat.body.sources).toEqual([
      { ref: 1, source_id: accepted.source_id, title: 'Lamp manual', page: 2, heading: 'Wi-Fi' },
    ]);
  });
});

describe('files that cannot be read say why, and leave nothing half-written', () => {
  const failsWith = async (file: { name: string; bytes: Buffer | string }, reason: RegExp) => {
    const bot = await newBot();
    const res = await uploadFile(key(bot), file);
    expect(res.status).toBe(202);
    const source = await readingDone(key(bot), res.body.source_id);
    expect(source.status).toBe('failed');
    expect(source.reason).toMatch(reason);
    expect(source.fragments).toBe(0);
    expect(source.passages).toEqual([]);
    return { bot, source };
  };

  it('an encrypted PDF', async () => {
    const pdf = await makePdf((d) => d.text('The secret recipe.'), { userPassword: 'pw', ownerPassword: 'owner' });
    await failsWith({ name: 'secret.pdf', bytes: pdf }, /encrypted PDF: remove the password/);
  });

  it('a PDF with no text layer (an image only): it looks scanned', async () => {
    const pdf = await makePdf((d) => d.image(makePng(64, 64), 50, 50, { width: 300 }));
    await failsWith({ name: 'scan.pdf', bytes: pdf }, /looks scanned: no text to read/);
  });

  it('a damaged PDF', async () => {
    const pdf = (await twoPagePdf()).subarray(0, 300);
    await failsWith({ name: 'broken.pdf', bytes: pdf }, /damaged/);
  });

  it(`a PDF of more than ${LIMITS.knowledgeFiles.maxPages} pages`, async () => {
    const pages = LIMITS.knowledgeFiles.maxPages + 1;
    const pdf = await makePdf((d) => {
      for (let i = 1; i <= pages; i++) {
        if (i > 1) d.addPage();
        d.text(`Page ${i}`);
      }
    });
    await failsWith({ name: 'long.pdf', bytes: pdf }, new RegExp(`has ${pages} pages; at most ${pages - 1}`));
  });

  it('a PNG named .pdf is refused as an image (415), and nothing is written', async () => {
    const bot = await newBot();
    const res = await uploadFile(key(bot), { name: 'manual.pdf', bytes: makePng(16, 16), type: 'application/pdf' });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({
      code: 'unsupported_media_type',
      error: expect.stringMatching(/image \(PNG\), not a document/),
    });
    expect((await http('/v1/api/knowledge', { key: key(bot) })).body.sources).toEqual([]);
  });

  it('a file over the size limit is 413 payload_too_large, and nothing is written', async () => {
    const bot = await newBot();
    const big = Buffer.alloc(LIMITS.knowledgeFiles.bytes + 1, 'a');
    const res = await uploadFile(key(bot), { name: 'big.txt', bytes: big });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
    // At the limit it is taken.
    const fits = Buffer.alloc(LIMITS.knowledgeFiles.bytes, 'a');
    expect((await uploadFile(key(bot), { name: 'fits.txt', bytes: fits })).status).toBe(202);
    const { rows } = await testDb().query(`SELECT name FROM knowledge_files WHERE bot_id = $1`, [bot.bot_id]);
    expect(rows).toEqual([{ name: 'fits.txt' }]);
  });

  it('a request without a file, or not multipart, is 400', async () => {
    const bot = await newBot();
    const none = await http('/v1/api/knowledge/files', { key: key(bot), body: { text: 'x' } });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/multipart\/form-data/);
  });
});

describe('replacing and retrying', () => {
  it('the same file name again replaces its source; the first version stays searchable until the second is indexed', async () => {
    const bot = await newBot();
    const first = await uploadAndRead(bot, { name: 'faq.md', bytes: '# FAQ\n\nThe shop sells green umbrellas.' });
    const second = await uploadFile(key(bot), { name: 'faq.md', bytes: '# FAQ\n\nThe shop now sells red umbrellas.' });
    expect(second.status).toBe(202);
    expect(second.body).toMatchObject({ source_id: first.accepted.source_id, replaced: true });
    const source = await readingDone(key(bot), first.accepted.source_id);
    expect(source.passages.map((p: Passage) => p.text)).toEqual(['The shop now sells red umbrellas.']);
    const list = await http('/v1/api/knowledge', { key: key(bot) });
    expect(list.body.sources).toHaveLength(1);
  });

  it('an Idempotency-Key replays the first answer (the multipart boundary differs), and refuses another file', async () => {
    const bot = await newBot();
    const headers = { 'Idempotency-Key': randomUUID() };
    const file = { name: 'notes.txt', bytes: 'The parking lot opens at seven.' };
    const first = await uploadFile(key(bot), file, {}, headers);
    const again = await uploadFile(key(bot), file, {}, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    const other = await uploadFile(key(bot), { ...file, bytes: 'Something else.' }, {}, headers);
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_key_reused');
    const { rows } = await testDb().query(`SELECT count(*)::int AS n FROM knowledge_files WHERE bot_id = $1`, [
      bot.bot_id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it('pasted text is split on its Markdown-ish structure too, with its heading path', async () => {
    const bot = await newBot();
    const text = '# Returns\n\n## Within 30 days\n\nBring the receipt.\n\n## After 30 days\n\nStore credit only.';
    const res = await http('/v1/api/knowledge', { key: key(bot), body: { source_id: 'returns', text } });
    expect(res.status).toBe(202);
    const source = await http('/v1/api/knowledge/returns?passages=true', { key: key(bot) });
    expect(source.body).toMatchObject({ kind: 'text', status: 'indexed', file: null });
    expect(source.body.passages).toEqual([
      { text: 'Bring the receipt.', heading_path: ['Returns', 'Within 30 days'], page: null },
      { text: 'Store credit only.', heading_path: ['Returns', 'After 30 days'], page: null },
    ]);
  });
});

describe("the dashboard's upload", () => {
  it('takes a multipart upload only from our own page (a form on another site cannot send one)', async () => {
    const bot = await newBot();
    const session = await ownerSession(bot);
    const form = new FormData();
    form.set('file', new Blob(['The ferry leaves at noon.'], { type: 'text/plain' }), 'ferry.txt');
    const request = new Request('http://localhost/', { method: 'POST', body: form });
    const body = Buffer.from(await request.arrayBuffer()).toString('utf8');
    const post = (headers: Record<string, string>) =>
      rawRequest(`${stackInfo().apiUrl}/v1/dashboard/bots/${bot.bot_id}/knowledge/files`, {
        method: 'POST',
        body,
        headers: { ...session, 'Content-Type': request.headers.get('content-type')!, ...headers },
      });
    expect((await post({})).status).toBe(415); // no proof it comes from our page
    expect((await post({ 'Sec-Fetch-Site': 'cross-site' })).status).toBe(403);
    const ours = await post({ 'Sec-Fetch-Site': 'same-origin' });
    expect(ours.status).toBe(202);
    const source = await readingDone(key(bot), ours.body.source_id);
    expect(source).toMatchObject({ status: 'indexed', file: { name: 'ferry.txt' } });
  });
});
