/**
 * Where the widget runs and where it was refused (lib/widget/sightings.ts): a set-up mistake is named in the
 * dashboard — the origin a visitor's page had — instead of a CORS error in the visitor's console.
 */
import { describe, expect, it } from '@jest/globals';
import { SIGHTINGS_PER_BOT } from '../../lib/widget/sightings';
import { http, newBot, ownerSession, waitUntil } from '../support/helpers';
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
});
