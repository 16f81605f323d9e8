import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { newBot } from '../support/helpers';
import { launchChromium } from '../support/browser';
import { SITEMAP_ONLY_FACTS, startFakeSite, urlsetXml } from '../support/fake-site';
import { stackInfo } from '../support/stack-info';

/**
 * The knowledge tab's scans as an owner meets them (web/dashboard/src/pages/agent/scan-panel.tsx): a running scan
 * stopped with one button, a scan that found nothing said in plain words with the crawler's message under
 * "Technical detail", and a scan limited by path patterns over a site with a sitemap. Screenshots go to
 * test-artifacts/dashboard/scans-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

/** An address where nothing answers: a port that was free a moment ago. */
async function closedPortUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}/`;
}

describe('site scans on the knowledge tab', () => {
  it('stops a running scan, and says in plain words why a scan found nothing', async () => {
    // Crawl-delay makes the crawler wait a second between requests: the scan runs long enough to be stopped.
    const slow = await startFakeSite({ robotsTxt: 'User-agent: *\nCrawl-delay: 1\n' });
    try {
      const bot = await newBot();
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${stackInfo().apiUrl}/agents/${bot.bot_id}/knowledge`);
      await page.getByLabel('E-mail').fill(bot.email);
      await page.getByLabel('Password', { exact: true }).fill(bot.password);
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page.getByLabel('Start address').fill(slow.url);
      await page.getByLabel('Pages at most').fill('20');
      await page.getByRole('button', { name: 'Start scan' }).click();
      await page.getByTestId('scan-progress').waitFor();
      await page.getByRole('button', { name: 'Stop scan' }).click();
      const scans = page.getByTestId('recent-scans');
      await scans.getByText('Stopped', { exact: true }).waitFor({ timeout: 15_000 });
      await scans.getByText('This scan was stopped before it finished.').waitFor();
      await scans.getByText(/read before it was stopped/).waitFor();
      // The form is back for the next scan.
      await page.getByRole('button', { name: 'Start scan' }).waitFor();

      // A site where nothing answers: said in words, the crawler's own message one click away.
      const url = await closedPortUrl();
      await page.getByLabel('Start address').fill(url);
      await page.getByLabel('Read again every').fill('0');
      await page.getByRole('button', { name: 'Start scan' }).click();
      const problem = scans.getByTestId('scan-problem').filter({ hasText: 'could not be reached' });
      await problem.waitFor({ timeout: 20_000 });
      expect(await problem.textContent()).toContain('Check the address');
      await problem.getByText('Technical detail').click();
      expect(await problem.locator('code').textContent()).toContain(url);
      await scans.getByText('Failed', { exact: true }).waitFor();
      await page.screenshot({ path: path.join(ARTIFACTS, 'scans-01-stopped-and-failed.png'), fullPage: true });
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await slow.close();
    }
  });

  it('takes path patterns, reads the pages the sitemap lists within them, and shows both on the scan', async () => {
    const site = await startFakeSite({
      sitemaps: {
        '/sitemap.xml': (base) =>
          urlsetXml(
            base,
            SITEMAP_ONLY_FACTS.map((f) => f.path),
          ),
      },
    });
    try {
      const bot = await newBot();
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (err) => errors.push(err.message));
      await page.goto(`${stackInfo().apiUrl}/agents/${bot.bot_id}/knowledge`);
      await page.getByLabel('E-mail').fill(bot.email);
      await page.getByLabel('Password', { exact: true }).fill(bot.password);
      await page.getByRole('button', { name: 'Sign in' }).click();

      await page.getByLabel('Start address').fill(site.url);
      await page.getByLabel('Pages at most').fill('20');
      await page.getByLabel('Only these paths').fill('/guides/*, /blog/*');
      await page.getByLabel('Skip these paths').fill('/blog/2024/*');
      await page.screenshot({ path: path.join(ARTIFACTS, 'scans-02-patterns-entered.png'), fullPage: true });
      await page.getByRole('button', { name: 'Start scan' }).click();

      const scans = page.getByTestId('recent-scans');
      await scans.getByText('Done', { exact: true }).waitFor({ timeout: 30_000 });
      const scope = scans.getByTestId('scan-scope');
      expect(await scope.textContent()).toBe(
        'Only /guides/*, /blog/* · skipping /blog/2024/* · 3 pages from the sitemap',
      );
      await scans.getByText(/3 indexed of 4 fetched, 1 skipped/).waitFor();
      // The pages the sitemap led to are the agent's sources now; the excluded one is not.
      await page.getByText('setup | Acme Widgets').first().waitFor();
      expect(await page.getByText('recall | Acme Widgets').count()).toBe(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'scans-03-patterns-and-sitemap.png'), fullPage: true });
      expect(site.hits).not.toContain('/blog/2024/recall');
      expect(errors).toEqual([]);
      await context.close();
    } finally {
      await site.close();
    }
  });
});
