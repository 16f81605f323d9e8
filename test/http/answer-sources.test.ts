import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import type { BootstrapResult } from '../../lib/accounts/service';
import { http as api, newBot, ownerSession, sseFrames, waitUntil } from '../support/helpers';
import { widgetCall, widgetSession } from '../support/widget';

/**
 * Answers name the knowledge sources they used (issue 21, item 1; docs/decisions/058-answers-cite-sources.md):
 * the sources the model cites as [n], or every source it was given when it cites none, in the chat response, the
 * stream's end frame, the widget's poll and the transcripts.
 */
const SHIPPING = 'Parcels leave our warehouse every weekday.\nFACT: parcels ship from Tallinn within two days';
const WARRANTY = 'Every parcel is insured; the warranty covers parcels lost in shipping for two years.';
const QUESTION = 'How fast do parcels ship?';

async function botWithKnowledge(): Promise<BootstrapResult> {
  const bot = await newBot();
  for (const [source_id, title, text] of [
    ['shipping', 'Shipping times', SHIPPING],
    ['warranty', 'Warranty', WARRANTY],
  ]) {
    const res = await api('/v1/api/knowledge', { key: bot.keys.secret_key, body: { source_id, title, text } });
    expect(res.status).toBe(202);
  }
  return bot;
}

const chat = (bot: BootstrapResult, message: string, session_id = randomUUID()) =>
  api('/v1/api/chat', { key: bot.keys.secret_key, body: { session_id, message } });

describe('answers name their sources', () => {
  it('names the sources the model cites, with the number it cites them by', async () => {
    const bot = await botWithKnowledge();
    const res = await chat(bot, `[[fake:cite]] ${QUESTION}`);
    expect(res.status).toBe(200);
    // Both sources were given to the model; it cited the one its answer came from.
    const cited = /FACT: parcels ship from Tallinn within two days \[(\d)\]/.exec(res.body.answer);
    expect(cited).not.toBeNull();
    expect(res.body.sources).toEqual([{ ref: Number(cited![1]), source_id: 'shipping', title: 'Shipping times' }]);
  });

  it('names every source it was given when the answer cites none', async () => {
    const bot = await botWithKnowledge();
    const res = await chat(bot, QUESTION);
    expect(res.status).toBe(200);
    expect(res.body.answer).not.toMatch(/\[\d\]/);
    const sources = res.body.sources as { ref: number; source_id: string }[];
    expect(sources.map((s) => s.source_id).sort()).toEqual(['shipping', 'warranty']);
    expect(sources.map((s) => s.ref)).toEqual([1, 2]);
  });

  it('has no sources when no knowledge matched', async () => {
    const bot = await botWithKnowledge();
    const res = await chat(bot, 'Tell me a joke about cats');
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty('sources');
  });

  it('carries them in the end frame of a stream, in the widget poll and in transcripts', async () => {
    const bot = await botWithKnowledge();
    const sessionId = randomUUID();
    const stream = await sseFrames('/v1/api/chat/stream', {
      key: bot.keys.secret_key,
      body: { session_id: sessionId, message: `[[fake:cite]] ${QUESTION}` },
    });
    const end = stream.frames.at(-1)!;
    expect(end).toMatchObject({ done: true, handoff: false });
    expect(end.sources).toEqual([expect.objectContaining({ source_id: 'shipping', title: 'Shipping times' })]);
    expect(stream.frames.filter((f) => 'delta' in f && f.sources !== undefined)).toEqual([]);

    // The operator API's transcript and the dashboard inbox's keep them on the bot's message.
    const thread = await api(`/v1/api/operator/threads/${sessionId}`, { key: bot.keys.secret_key });
    expect(thread.status).toBe(200);
    const answer = thread.body.messages.find((m: { author: string }) => m.author === 'bot');
    expect(answer.sources).toEqual(end.sources);
    expect(thread.body.messages.find((m: { author: string }) => m.author === 'visitor')).not.toHaveProperty('sources');
    const inbox = await api(`/v1/dashboard/bots/${bot.bot_id}/threads/${sessionId}`, {
      headers: await ownerSession(bot),
    });
    expect(inbox.body.messages.find((m: { author: string }) => m.author === 'bot').sources).toEqual(end.sources);

    // The public poll stays the contract's; the widget's has them (its links under answers after a reload).
    const poll = await api(`/v1/api/messages?session_id=${sessionId}`, { key: bot.keys.secret_key });
    expect(poll.status).toBe(200);
    expect(poll.body.messages.some((m: object) => 'sources' in m)).toBe(false);
    const visitor = await widgetSession(bot);
    const said = await widgetCall(bot, '/v1/widget/chat', {
      method: 'POST',
      token: visitor.visitor_token,
      body: { session_id: visitor.session_id, message: `[[fake:cite]] ${QUESTION}` },
    });
    expect(said.status).toBe(200);
    expect(said.body.sources).toEqual(end.sources);
    const polled = await widgetCall(bot, `/v1/widget/messages?session_id=${visitor.session_id}`, {
      token: visitor.visitor_token,
    });
    expect(polled.body.messages.find((m: { id: string }) => m.id === said.body.message_id).sources).toEqual(
      end.sources,
    );
  });

  it('a cached answer repeats its sources', async () => {
    const bot = await botWithKnowledge();
    const question = `[[fake:cite]] [[fake:tag:sources-${randomUUID()}]] ${QUESTION}`;
    const first = await chat(bot, question);
    const second = await chat(bot, question);
    expect(second.body.answer).toBe(first.body.answer);
    expect(second.body.sources).toEqual(first.body.sources);
    expect(first.body.sources).toHaveLength(1);
  });

  describe('a page a site scan read', () => {
    let site: http.Server;
    let siteUrl: string;

    beforeAll(async () => {
      site = http.createServer((req, res) => {
        if (req.url !== '/returns') return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(
          '<html><head><title>Returns policy</title></head><body>' +
            '<p>Returns of unused items are accepted at our shop.</p>' +
            '<p>FACT: returns are free for sixty days</p></body></html>',
        );
      });
      await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
      siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/returns`;
    });
    afterAll(() => new Promise((resolve) => site.close(resolve)));

    it("is named with the page's address", async () => {
      const bot = await newBot();
      const scan = await api('/v1/admin/scrape', {
        key: bot.keys.secret_key,
        body: { url: siteUrl, max_pages: 1, refresh_days: 0 },
      });
      expect(scan.status).toBe(202);
      await waitUntil(
        'the page indexed',
        async () => (await api('/v1/api/knowledge', { key: bot.keys.secret_key })).body.sources.length === 1,
        30_000,
      );
      const res = await chat(bot, `[[fake:cite]] Are returns free?`);
      expect(res.status).toBe(200);
      expect(res.body.answer).toContain('FACT: returns are free for sixty days [1]');
      expect(res.body.sources).toEqual([
        { ref: 1, source_id: expect.any(String), title: 'Returns policy', url: siteUrl },
      ]);
    });
  });
});
