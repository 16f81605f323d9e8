import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { type FakeSmtp, parseMessage, startFakeSmtp } from '../support/fake-smtp';
import { http, newBot, ownerSession, waitUntil } from '../support/helpers';
import { type InProcessApi, startInProcessApi } from '../support/in-process-api';
import { stackInfo } from '../support/stack-info';

/**
 * The accounts surface as an attacker tries it (issue 17): links in e-mails that a request's headers could redirect,
 * guessing passwords in parallel, making the API hash passwords for nothing, and flooding people with invitations.
 * E-mails go to a real SMTP peer (test/support/fake-smtp.ts) from an API of this file's own, started without any
 * configured public address and trusting proxy headers — the set-up the takeover worked against.
 */
const unique = () => `person+${randomBytes(6).toString('hex')}@example.com`;
const PASSWORD = 'correct horse battery';

/** A POST with headers fetch will not send as given (`Host`), through node:http. */
function rawPost(
  baseUrl: string,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; body: any }> {
  const url = new URL(path, baseUrl);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

const ATTACKER = { Host: 'attacker.example', 'X-Forwarded-Host': 'attacker.example', 'X-Forwarded-Proto': 'https' };

let smtp: FakeSmtp;
let api: InProcessApi;
beforeAll(async () => {
  smtp = await startFakeSmtp();
  api = await startInProcessApi({
    SMTP_URL: smtp.url,
    SMTP_FROM: 'Agent Platform <no-reply@platform.test>',
    PUBLIC_BASE_URL: undefined,
    DASHBOARD_URL: undefined,
    TRUST_PROXY: 'true',
  });
});
afterAll(async () => {
  await api.close();
  await smtp.close();
});

const mailTo = async (email: string) =>
  parseMessage(
    (await waitUntil(`the e-mail to ${email}`, async () => smtp.messages.find((m) => m.to.includes(email))))!.data,
  );

describe('links in e-mails come from configuration, never from the request', () => {
  const configured = () => `http://localhost:${stackInfo().env.PORT}`;

  it("a reset requested with an attacker's Host mails a link to the platform's own address", async () => {
    const bot = await newBot();
    const asked = await rawPost(api.url, '/v1/auth/password-reset', { email: bot.email }, ATTACKER);
    expect(asked.status).toBe(202);
    const mail = await mailTo(bot.email);
    expect(mail.text).not.toContain('attacker.example');
    expect(mail.text).toContain(`${configured()}/reset-password`);
  });

  it("an invitation sent with an attacker's Host links to the platform's own address", async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const email = unique();
    const invited = await rawPost(api.url, '/v1/dashboard/team/invitations', { email, role: 'operator' }, {
      ...ATTACKER,
      ...owner,
    });
    expect(invited.status).toBe(201);
    expect(invited.body.invite_url).toMatch(new RegExp(`^${configured()}/invite`));
    const mail = await mailTo(email);
    expect(mail.text).not.toContain('attacker.example');
    expect(mail.text).toContain(`${configured()}/invite`);
  });
});
