import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { createDb } from '../lib/db';
import { benchOptions, summarize } from './measure';
import { benchBot, liftRateLimits, startBenchStack } from './stack';

const HELP = `Usage: npm run bench -- widget [--rounds N] [--warmup N]

The visitor's widget (web/widget, built by scripts/setup.sh into web/widget/dist/widget.js):

  bundle        the size of widget.js, raw and gzipped (gzip -9), and what GET /widget.js sends with
                Accept-Encoding: gzip. Target: well under 40 KiB gzipped.
  first char    time to the first streamed character of an answer, in headless Chromium (/usr/bin/chromium): from
                the Enter key in the widget's message box to the first text of the bot's bubble in the DOM, on a
                page of another origin that embeds the widget; beside it, in the same run and alternating rounds,
                the same kind of answer's first \`delta\` frame read by \`curl -N\` (a child process) from
                POST /v1/widget/chat/stream. curl's figure is from its spawn, so it includes the process's start:
                a no-op curl's spawn-to-exit time is reported with it.

Starts its own platform (as the tests do) with the fake OpenAI server answering at once. Each round asks a new
question (the answer cache never answers). --rounds (default 20) of each, after --warmup (default 3) of each.
Results: bench/results/widget.json.`;

const BUNDLE = path.join(__dirname, '..', 'web', 'widget', 'dist', 'widget.js');

function run(cmd: string, args: string[]): Promise<{ ms: number; firstDeltaMs: number; out: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let firstDeltaMs = NaN;
    let out = '';
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (Number.isNaN(firstDeltaMs) && out.includes('"delta"')) firstDeltaMs = performance.now() - started;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve({ ms: performance.now() - started, firstDeltaMs, out })
        : reject(new Error(`${cmd}: ${code}`)),
    );
  });
}

async function main() {
  const arg = benchOptions(HELP);
  if (!arg) return;
  const rounds = Number(arg('--rounds', '20'));
  const warmup = Number(arg('--warmup', '3'));

  const raw = readFileSync(BUNDLE);
  const bundle = { raw_bytes: raw.length, gzip_bytes: gzipSync(raw, { level: 9 }).length };
  console.log(JSON.stringify({ bundle }));

  const stack = await startBenchStack();
  const db = createDb(stack.platform.env.DATABASE_URL, { max: 2 });
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  let page: Server | undefined;
  try {
    const api = stack.platform.apiUrl;
    const bot = await benchBot(db, stack.platform.env.SECRET_ENCRYPTION_KEY);
    await liftRateLimits(db);

    const served = await fetch(`${api}/widget.js`, { headers: { 'Accept-Encoding': 'gzip' } });
    const servedBody = Buffer.from(await served.arrayBuffer());
    const servedInfo = {
      status: served.status,
      content_type: served.headers.get('content-type'),
      content_encoding: served.headers.get('content-encoding'),
      // fetch decodes gzip itself: the length on the wire is the header's.
      content_length: Number(served.headers.get('content-length')) || servedBody.length,
    };
    console.log(JSON.stringify({ served: servedInfo }));

    // The integrator's page, on an origin of its own, that the bot allows.
    page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(
        `<!doctype html><html><head><meta charset="utf-8"><title>Shop</title></head><body><h1>Shop</h1>` +
          `<script src="${api}/widget.js" data-key="${bot.keys.public_key}" data-open="true" async></script></body></html>`,
      );
    });
    await new Promise<void>((r) => page!.listen(0, '127.0.0.1', r));
    const origin = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
    await db.query(`UPDATE bots SET allowed_origins = ARRAY[$2] WHERE id = $1`, [bot.bot_id, origin]);

    const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
    const tab = await context.newPage();
    await tab.goto(origin);
    await tab.getByRole('textbox', { name: 'Message' }).waitFor();

    // In the page: type a question, press Enter and time until the new bot bubble first holds text; then wait for
    // the answer's end (its rating buttons) so the next round starts on a quiet conversation.
    const widgetRound = (question: string) =>
      tab.evaluate<number>(`new Promise((resolve, reject) => {
        const root = document.querySelector('agent-platform-widget').shadowRoot;
        const box = root.querySelector('textarea');
        const before = root.querySelectorAll('.msg-bot').length;
        let first;
        const check = () => {
          const bots = root.querySelectorAll('.msg-bot');
          if (bots.length <= before) return;
          const bot = bots[bots.length - 1];
          if (first === undefined && bot.querySelector('.bubble').textContent.length > 0) first = performance.now() - t0;
          if (first !== undefined && bot.querySelector('.rating')) { observer.disconnect(); resolve(first); }
        };
        const observer = new MutationObserver(check);
        observer.observe(root, { subtree: true, childList: true, characterData: true });
        setTimeout(() => { observer.disconnect(); reject(new Error('no answer in 15 s')); }, 15000);
        box.value = ${JSON.stringify(question)};
        box.dispatchEvent(new Event('input', { bubbles: true }));
        const t0 = performance.now();
        box.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
      })`);

    // curl against the same endpoint, with a widget session of its own.
    const session = (await (
      await fetch(`${api}/v1/widget/session?key=${bot.keys.public_key}`, { method: 'POST' })
    ).json()) as { session_id: string; visitor_token: string };
    const curlRound = async (question: string) => {
      const res = await run('curl', [
        '-N',
        '-s',
        '-X',
        'POST',
        `${api}/v1/widget/chat/stream?key=${bot.keys.public_key}`,
        '-H',
        'Content-Type: application/json',
        '-H',
        `X-Visitor-Token: ${session.visitor_token}`,
        '--data',
        JSON.stringify({ session_id: session.session_id, message: question }),
      ]);
      if (Number.isNaN(res.firstDeltaMs)) throw new Error(`curl got no delta: ${res.out.slice(0, 300)}`);
      return res.firstDeltaMs;
    };
    const curlStartup = async () => (await run('curl', ['-s', '-o', '/dev/null', 'file:///dev/null'])).ms;

    let asked = 0;
    const question = () => `How long does delivery take to city number ${++asked}?`;
    for (let i = 0; i < warmup; i++) {
      await widgetRound(question());
      await curlRound(question());
      await curlStartup();
    }
    const widgetMs: number[] = [];
    const curlMs: number[] = [];
    const startupMs: number[] = [];
    for (let i = 0; i < rounds; i++) {
      // Alternating which goes first, so neither always runs right after the other's turn.
      if (i % 2 === 0) {
        widgetMs.push(await widgetRound(question()));
        curlMs.push(await curlRound(question()));
      } else {
        curlMs.push(await curlRound(question()));
        widgetMs.push(await widgetRound(question()));
      }
      startupMs.push(await curlStartup());
    }
    const out = {
      benchmark: 'widget',
      at: new Date().toISOString(),
      rounds,
      bundle: {
        ...bundle,
        raw_kib: +(bundle.raw_bytes / 1024).toFixed(1),
        gzip_kib: +(bundle.gzip_bytes / 1024).toFixed(1),
      },
      served: servedInfo,
      target: 'widget.js well under 40 KiB gzipped',
      target_met: bundle.gzip_bytes < 40 * 1024,
      first_char: {
        widget_in_chromium_ms: summarize(widgetMs),
        curl_first_delta_ms: summarize(curlMs),
        curl_process_start_ms: summarize(startupMs),
      },
    };
    console.log(JSON.stringify(out.first_char));
    writeFileSync(path.join(__dirname, 'results', 'widget.json'), JSON.stringify(out, null, 2));
    await context.close();
  } finally {
    await browser.close();
    await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
    await db.end();
    await stack.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
