import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { http } from '../support/helpers';
import { launchChromium } from '../support/browser';
import { stackInfo } from '../support/stack-info';

/**
 * `/docs`, the API reference, is sent with the pages' security headers (never framed, nothing sniffed, scripts only
 * from the API itself), and the interactive reference still renders under them in Chromium. Screenshot in
 * test-artifacts/docs/.
 */
const ARTIFACTS = path.join(__dirname, '..', '..', 'test-artifacts', 'docs');

let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

describe('/docs', () => {
  it('has the pages’ CSP, frame-ancestors none, nosniff and no referrer', async () => {
    const res = await http('/docs');
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
  });

  it('renders the interactive reference under that policy, with no violation reported', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
    const page = await context.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    try {
      await page.goto(`${stackInfo().apiUrl}/docs`);
      // Scalar replaced the server-rendered index: its reference shows an operation of the contract.
      await page.locator('html.docs-js').waitFor({ state: 'attached' });
      const reference = page.locator('#reference');
      await reference.getByRole('heading').first().waitFor({ timeout: 20_000 });
      expect(await reference.innerText()).toMatch(/chat/i);
      await page.waitForTimeout(500);
      expect(await page.locator('html.docs-fallback').count()).toBe(0);
      await page.screenshot({ path: path.join(ARTIFACTS, 'reference.png') });
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
