/**
 * Where the widget runs and where it was refused (lib/widget/sightings.ts): a set-up mistake is named in the
 * dashboard — the origin a visitor's page had — instead of a CORS error in the visitor's console.
 */
import { describe, expect, it } from '@jest/globals';
import type { BootstrapResult } from '../../lib/accounts/service';
import { LIMITS } from '../../lib/limits';
import { SIGHTINGS_PER_BOT } from '../../lib/widget/sightings';
import {
  http,
  inOneRateWindow,
  newBot,
  ownerSession,
  testDb,
  uniqueClientAddress,
  waitUntil,
} from '../support/helpers';
import { stackInfo } from '../support/stack-info';
import { allowOrigins, browserRequest } from '../support/widget';

const SHOP = 'https://shop.example.com';
const STAGING = 'https://staging.shop.example.com';

interface Site {
  origin: string;
  allowed: boolean;
  last_allowed_at: number | null;
  last_refused_at: number | null;
}

describe("the widget's sites", () => {
  it('names the sites it ran on and the ones it was refused on, and a refused one once allowed', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    await allowOrigins(bot, [SHOP]);
    const key = bot.keys.public_key;
    const sites = async (): Promise<Site[]> => {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/widget-sites`, { headers: owner });
      expect(res.status).toBe(200);
      return res.body.sites;
    };
    expect(await sites()).toEqual([]);

    const started = Date.now();
    expect((await browserRequest(`/v1/widget/config?key=${key}`, { origin: SHOP })).status).toBe(200);
    expect((await browserRequest(`/v1/widget/config?key=${key}`, { origin: STAGING })).status).toBe(403);
    // A browser asks first before a POST with JSON; a refused origin gets no allowance and never sends the POST.
    const preflight = await browserRequest(`/v1/widget/session?key=${key}`, {
      method: 'OPTIONS',
      origin: 'http://localhost:3000',
      headers: { 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    // The dashboard's own pages (a preview) are not an integrator's site.
    expect((await browserRequest(`/v1/widget/config?key=${key}`, { origin: stackInfo().apiUrl })).status).toBe(200);

    const seen = await waitUntil('three sites', async () => {
      const list = await sites();
      return list.length === 3 ? list : undefined;
    });
    const byOrigin = Object.fromEntries(seen.map((s) => [s.origin, s]));
    expect(byOrigin[SHOP]).toMatchObject({ allowed: true, last_refused_at: null });
    expect(byOrigin[SHOP].last_allowed_at).toBeGreaterThanOrEqual(started - 1000);
    expect(byOrigin[STAGING]).toMatchObject({ allowed: false, last_allowed_at: null });
    expect(byOrigin[STAGING].last_refused_at).toBeGreaterThanOrEqual(started - 1000);
    expect(byOrigin['http://localhost:3000']).toMatchObject({ allowed: false, last_allowed_at: null });

    // The owner allows the refused site: it reads as allowed at once (the refusal stays on record).
    await allowOrigins(bot, [SHOP, STAGING]);
    const after = Object.fromEntries((await sites()).map((s) => [s.origin, s]));
    expect(after[STAGING]).toMatchObject({ allowed: true, last_refused_at: byOrigin[STAGING].last_refused_at });

    // Another workspace's owner sees nothing of it.
    const stranger = await ownerSession(await newBot());
    const res = await http(`/v1/dashboard/bots/${bot.bot_id}/widget-sites`, { headers: stranger });
    expect(res.status).toBe(404);
  });

  it(`keeps at most ${SIGHTINGS_PER_BOT} origins a bot, whatever a caller puts in Origin`, async () => {
    const bot = await newBot();
    const key = bot.keys.public_key;
    await Promise.all(
      Array.from({ length: SIGHTINGS_PER_BOT + 10 }, (_, i) =>
        browserRequest(`/v1/widget/config?key=${key}`, { origin: `https://made-up-${i}.example` }),
      ),
    );
    const owner = await ownerSession(bot);
    const count = async () => {
      const res = await http(`/v1/dashboard/bots/${bot.bot_id}/widget-sites`, { headers: owner });
      return res.body.sites.length as number;
    };
    await waitUntil(`${SIGHTINGS_PER_BOT} sites`, async () => (await count()) >= SIGHTINGS_PER_BOT);
    await new Promise((r) => setTimeout(r, 300));
    expect(await count()).toBe(SIGHTINGS_PER_BOT);
  });

  it('counts preflights in the widget reads: past the budget they are 429, and their origins are not noted', async () => {
    const bot = await newBot();
    const key = bot.keys.public_key;
    const address = uniqueClientAddress();
    const limit = LIMITS.rateGroups.widgetReads;
    await inOneRateWindow(40_000);
    // All but 10 of the budget of this key and address spent on reads (no Origin: nothing to note).
    for (let sent = 0; sent < limit - 10; sent += 25) {
      const batch = Math.min(25, limit - 10 - sent);
      const statuses = await Promise.all(
        Array.from({ length: batch }, () =>
          http(`/v1/widget/config?key=${key}`, { headers: { 'X-Forwarded-For': address } }).then((r) => r.status),
        ),
      );
      expect(statuses).toEqual(Array(batch).fill(200));
    }
    // Preflights, each from an origin never seen: 10 more fit.
    const origins = Array.from({ length: 30 }, (_, i) => `https://flood-${i}.example`);
    const answers = [];
    for (const origin of origins) answers.push(await preflight(key, origin, address));
    expect(answers.map((a) => a.status)).toEqual([...Array(10).fill(204), ...Array(20).fill(429)]);
    const refused = answers.at(-1)!;
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.headers['ratelimit-limit']).toBe(String(limit));
    expect(refused.headers['ratelimit-remaining']).toBe('0');

    // Only the preflights within the budget were noted.
    const owner = await ownerSession(bot);
    const noted = async () => (await sitesOf(bot, owner)).map((s) => s.origin).sort();
    await waitUntil('10 sites', async () => (await noted()).length >= 10);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await noted()).toEqual(origins.slice(0, 10).sort());
  });

  it(`forgets sightings after ${LIMITS.widget.sightingsKeptDays} days, so made-up origins do not hold the list`, async () => {
    const bot = await newBot();
    const key = bot.keys.public_key;
    await allowOrigins(bot, [SHOP]);
    const owner = await ownerSession(bot);
    // The bot's own site runs; then someone fills the refused list with made-up origins.
    expect((await browserRequest(`/v1/widget/config?key=${key}`, { origin: SHOP })).status).toBe(200);
    await waitUntil('the site', async () => (await sitesOf(bot, owner)).length === 1);
    await Promise.all(
      Array.from({ length: SIGHTINGS_PER_BOT }, (_, i) =>
        browserRequest(`/v1/widget/config?key=${key}`, { origin: `https://junk-${i}.example` }),
      ),
    );
    await waitUntil('the full list', async () => (await sitesOf(bot, owner)).length >= SIGHTINGS_PER_BOT);

    // A month later (the rows made older in the database), the junk is no longer listed…
    await testDb().query(
      `UPDATE widget_sightings SET last_refused_at = last_refused_at - make_interval(days => $2)
        WHERE bot_id = $1 AND origin <> $3`,
      [bot.bot_id, LIMITS.widget.sightingsKeptDays + 1, SHOP],
    );
    expect((await sitesOf(bot, owner)).map((s) => s.origin)).toEqual([SHOP]);
    // …and a site refused since takes its place: the owner sees which address to allow.
    expect((await browserRequest(`/v1/widget/config?key=${key}`, { origin: STAGING })).status).toBe(403);
    const listed = await waitUntil('the refused site', async () => {
      const list = await sitesOf(bot, owner);
      return list.some((s) => s.origin === STAGING) ? list : undefined;
    });
    expect(listed.map((s) => s.origin).sort()).toEqual([SHOP, STAGING].sort());
    // The expired rows are gone from the table too, not only from the list.
    const rows = await testDb().query(`SELECT origin FROM widget_sightings WHERE bot_id = $1`, [bot.bot_id]);
    expect(rows.rows.map((r) => r.origin).sort()).toEqual([SHOP, STAGING].sort());
  });

  it('lists a site the widget runs on even when made-up origins fill the refused list', async () => {
    const bot = await newBot();
    const key = bot.keys.public_key;
    await allowOrigins(bot, [SHOP]);
    const owner = await ownerSession(bot);
    await Promise.all(
      Array.from({ length: SIGHTINGS_PER_BOT + 5 }, (_, i) =>
        browserRequest(`/v1/widget/config?key=${key}`, { origin: `https://made-up-${i}.example` }),
      ),
    );
    await waitUntil('the full list', async () => (await sitesOf(bot, owner)).length >= SIGHTINGS_PER_BOT);
    expect((await browserRequest(`/v1/widget/config?key=${key}`, { origin: SHOP })).status).toBe(200);
    const listed = await waitUntil('the allowed site', async () => {
      const list = await sitesOf(bot, owner);
      return list.find((s) => s.origin === SHOP);
    });
    expect(listed).toMatchObject({ allowed: true, last_refused_at: null });
    expect((await sitesOf(bot, owner)).filter((s) => !s.allowed)).toHaveLength(SIGHTINGS_PER_BOT);
  });

  it('refuses an Origin longer than any allowed origin may be, preflight or call, and notes nothing', async () => {
    const bot = await newBot();
    const key = bot.keys.public_key;
    const long = `https://${'a'.repeat(LIMITS.widget.originChars)}.example`;
    const asked = await preflight(key, long, uniqueClientAddress());
    expect([asked.status, asked.body.code]).toEqual([400, 'bad_request']);
    const called = await browserRequest(`/v1/widget/config?key=${key}`, { origin: long });
    expect([called.status, called.body.code]).toEqual([400, 'bad_request']);
    await new Promise((r) => setTimeout(r, 1000));
    expect(await sitesOf(bot, await ownerSession(bot))).toEqual([]);
  });
});

/** A browser's CORS preflight of a widget POST from a page of `origin`, from the client `address`. */
function preflight(key: string, origin: string, address: string) {
  return browserRequest(`/v1/widget/session?key=${key}`, {
    method: 'OPTIONS',
    origin,
    headers: {
      'Access-Control-Request-Method': 'POST',
      'Access-Control-Request-Headers': 'content-type',
      'X-Forwarded-For': address,
    },
  });
}

async function sitesOf(bot: BootstrapResult, owner: Record<string, string>): Promise<Site[]> {
  const res = await http(`/v1/dashboard/bots/${bot.bot_id}/widget-sites`, { headers: owner });
  expect(res.status).toBe(200);
  return res.body.sites;
}
