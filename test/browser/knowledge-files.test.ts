import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { newBot } from '../support/helpers';
import { launchChromium } from '../support/browser';
import { makePdf, twoPagePdf } from '../support/documents';
import { stackInfo } from '../support/stack-info';

/**
 * Files dropped on the knowledge tab (web/dashboard/src/pages/agent/upload-files.tsx): several at once, each row
 * following its file from uploading to indexed with its passage count, or failed and why; the file then listed with
 * its original to download and its passages with their headings and pages. Screenshots go to
 * test-artifacts/dashboard/files-NN-*.png.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'dashboard');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => browser?.close());

describe('files on the knowledge tab', () => {
  it('takes several dropped files at once, shows each one’s progress, and says why one failed', async () => {
    const bot = await newBot();
    const files = [
      { name: 'lamp.pdf', type: 'application/pdf', bytes: await twoPagePdf() },
      {
        name: 'hose.md',
        type: 'text/markdown',
        bytes: Buffer.from('# Garden hose\n\n## Storage\n\nDrain it before winter.'),
      },
      {
        name: 'secret.pdf',
        type: 'application/pdf',
        bytes: await makePdf((d) => d.text('Secret'), { userPassword: 'pw', ownerPassword: 'owner' }),
      },
    ];
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${stackInfo().apiUrl}/agents/${bot.bot_id}/knowledge`);
    await page.getByLabel('E-mail').fill(bot.email);
    await page.getByLabel('Password', { exact: true }).fill(bot.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const zone = page.getByTestId('dropzone');
    await zone.waitFor();
    await zone.screenshot({ path: path.join(ARTIFACTS, 'files-01-dropzone.png') });

    // A drop of three files at once, as a file manager's drag does it.
    const transfer = await page.evaluateHandle(
      (list) => {
        // Browser globals, in the page (the test's own types have no DOM).
        const win = globalThis as unknown as {
          DataTransfer: new () => { items: { add(file: unknown): void } };
          File: new (parts: unknown[], name: string, opts: { type: string }) => unknown;
        };
        const dt = new win.DataTransfer();
        for (const f of list) dt.items.add(new win.File([new Uint8Array(f.bytes)], f.name, { type: f.type }));
        return dt;
      },
      files.map((f) => ({ name: f.name, type: f.type, bytes: [...f.bytes] })),
    );
    await zone.dispatchEvent('drop', { dataTransfer: transfer });

    const rows = page.getByTestId('upload-row');
    await rows.nth(2).waitFor();
    expect(await rows.count()).toBe(3);
    const row = (name: string) => rows.filter({ hasText: name }).getByTestId('upload-status');
    await row('lamp.pdf')
      .getByText(/^Indexed: \d+ passages? from 2 pages$/)
      .waitFor({ timeout: 30_000 });
    await row('hose.md').getByText('Indexed: 1 passage').waitFor({ timeout: 30_000 });
    await row('secret.pdf')
      .getByText('Failed: This is an encrypted PDF: remove the password and upload it again')
      .waitFor({ timeout: 30_000 });
    await page.locator('#add-files').screenshot({ path: path.join(ARTIFACTS, 'files-02-progress.png') });

    // The list shows each file with its original to download, and the failed one with its reason.
    const sources = page.getByTestId('sources');
    await sources.getByTestId('download').filter({ hasText: 'lamp.pdf' }).waitFor();
    await sources
      .getByTestId('source-reason')
      .getByText(/encrypted PDF/)
      .waitFor();
    const lamp = sources.locator('li').filter({ hasText: 'lamp.pdf' });
    await lamp.getByRole('button', { name: 'Show passages' }).click();
    await lamp.getByTestId('passages').getByText('Lamp manual › Wi-Fi · page 2').waitFor();
    const download = page.waitForEvent('download');
    await lamp.getByTestId('download').click();
    expect((await download).suggestedFilename()).toBe('lamp.pdf');
    await page.locator('#sources').screenshot({ path: path.join(ARTIFACTS, 'files-03-sources.png') });
    expect(errors).toEqual([]);
    await context.close();
  }, 90_000);
});
