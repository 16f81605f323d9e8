import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { http, newBot } from '../support/helpers';
import { addMember } from '../support/members';
import { launchChromium } from '../support/browser';
import { stackInfo } from '../support/stack-info';

/**
 * The `/connect` page (web/dashboard) in Debian's headless Chromium against the test stack's API: a client starts a
 * pairing, the owner opens `verify_url`, signs in, compares the code and approves; the client's poll then carries the
 * key, which the browser never sees. Screenshots go to test-artifacts/connect/ for people to look at.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'connect');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A browser profile of its own, recording every response body the page received. */
async function openContext(): Promise<{ context: BrowserContext; page: Page; received: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  const page = await context.newPage();
  const received: string[] = [];
  page.on('response', (res) => {
    void res
      .text()
      .then((t) => received.push(t))
      .catch(() => undefined);
  });
  return { context, page, received };
}

async function startPairing(device: string) {
  const res = await http('/v1/mcp-pair/start', { body: { device } });
  expect(res.status).toBe(201);
  return res.body as { verify_url: string; code: string; secret: string };
}

const poll = (code: string, secret: string) =>
  http(`/v1/mcp-pair/poll?code=${encodeURIComponent(code)}&secret=${encodeURIComponent(secret)}`);

async function signIn(page: Page, email: string, password: string) {
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

const shot = (page: Page, name: string) =>
  page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });

describe('/connect', () => {
  it('the owner signs in, checks the code, approves; the client gets the key and the page never sees it', async () => {
    const bot = await newBot({ workspaceName: 'Acme support' });
    const device = 'Claude Desktop on Ana’s laptop';
    const pairing = await startPairing(device);
    expect(pairing.verify_url.startsWith(stackInfo().apiUrl)).toBe(true);
    const { context, page, received } = await openContext();
    try {
      await page.goto(pairing.verify_url);
      await page.getByRole('heading', { name: 'Sign in to connect a client' }).waitFor();
      await shot(page, '1-sign-in');

      await signIn(page, bot.email, 'a wrong password');
      await page.getByText('Wrong e-mail or password.').waitFor();

      await signIn(page, bot.email, bot.password);
      await page.getByTestId('code').waitFor();
      expect(await page.getByTestId('device').textContent()).toBe(device);
      expect(await page.getByTestId('code').textContent()).toBe(pairing.code);
      expect(await page.textContent('body')).toContain('Acme support');
      expect(await page.textContent('body')).toContain(bot.email);
      await shot(page, '2-review');

      expect((await poll(pairing.code, pairing.secret)).body).toEqual({ status: 'pending' });
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.getByTestId('connected').waitFor();
      expect(await page.getByTestId('connected').textContent()).toBe(`Connected. Go back to ${device}.`);
      await shot(page, '3-connected');

      const collected = await poll(pairing.code, pairing.secret);
      expect(collected.body.status).toBe('ok');
      const key: string = collected.body.constructor_key;
      expect(key).toMatch(/^ck_/);

      // Reloaded after collection, the page says it is connected; the key is nowhere in what it shows or received.
      await page.reload();
      await page.getByTestId('connected').waitFor();
      expect(await page.content()).not.toContain(key);
      expect(await page.textContent('body')).not.toContain('ck_');
      expect(received.length).toBeGreaterThan(4);
      for (const body of received) expect(body).not.toContain(key);

      // The key works: an MCP client connects with it and sees the workspace (a paired key marks no agent).
      const client = new Client({ name: 'paired-client', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${stackInfo().apiUrl}/v1/api/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${key}` } },
        }),
      );
      const agents = await client.callTool({ name: 'agents', arguments: {} });
      await client.close();
      expect(agents.isError).toBeFalsy();
      expect((agents.structuredContent as { agents: { id: string; issued_for_this_key: boolean }[] }).agents).toEqual([
        expect.objectContaining({ id: bot.bot_id, issued_for_this_key: false }),
      ]);
    } finally {
      await context.close();
    }
  });

  it('a member sees the request but is told only the owner can approve', async () => {
    const bot = await newBot({ workspaceName: 'Acme support' });
    const member = await addMember(bot);
    const pairing = await startPairing('Cursor');
    const { context, page } = await openContext();
    try {
      await page.goto(pairing.verify_url);
      await signIn(page, member.email, member.password);
      await page.getByTestId('code').waitFor();
      await page.getByText('Only the owner of Acme support can connect a builder client').waitFor();
      expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
      await shot(page, '4-member');
      expect((await poll(pairing.code, pairing.secret)).body).toEqual({ status: 'pending' });
    } finally {
      await context.close();
    }
  });

  it('an unknown or expired code says so; without a code the owner can type it', async () => {
    const bot = await newBot();
    const { context, page } = await openContext();
    try {
      await page.goto(`${stackInfo().apiUrl}/connect?code=AAAA-AAAA`);
      await signIn(page, bot.email, bot.password);
      await page.getByTestId('gone').waitFor();
      expect(await page.getByTestId('gone').textContent()).toBe('This code is unknown or has expired.');
      await shot(page, '5-expired');

      const pairing = await startPairing('Zed');
      await page.goto(`${stackInfo().apiUrl}/connect`);
      await page.getByLabel('Code shown by your client').fill(pairing.code.replace('-', '').toLowerCase());
      await shot(page, '6-enter-code');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByTestId('code').waitFor();
      expect(await page.getByTestId('code').textContent()).toBe(pairing.code);
      // Declining approves nothing.
      await page.getByRole('button', { name: 'It is not mine' }).click();
      await page.getByText('Nothing was approved').waitFor();
      expect((await poll(pairing.code, pairing.secret)).body).toEqual({ status: 'pending' });
    } finally {
      await context.close();
    }
  });
});
