import { createHmac, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Stripe stand-in on loopback speaking the parts of Stripe's API the platform uses: `POST /v1/checkout/sessions`
 * (form-encoded, `Authorization: Bearer sk_…`) answering a session with its `url`, and webhook events sent to the
 * platform as Stripe sends them — JSON signed in `Stripe-Signature: t=…,v1=…` (HMAC-SHA256 of `t.payload` with the
 * endpoint's secret).
 */
export interface FakeStripe {
  url: string;
  secretKey: string;
  webhookSecret: string;
  /** Where the hosted page's "Pay" sends the paid event (the platform's webhook address). */
  webhookUrl: string;
  /** Checkout sessions created, with the form fields they were created with. */
  sessions: { id: string; fields: Record<string, string> }[];
  /** Sends `checkout.session.completed` for a session (paid), as Stripe would; returns the platform's answer. */
  pay(sessionId: string, webhookUrl: string): Promise<{ status: number; body: unknown; eventId: string }>;
  /** Sends an event as given (its id, type and object), signed at `at` (seconds) unless a signature is given. */
  send(
    webhookUrl: string,
    event: { id: string; type: string; object: Record<string, unknown> },
    opts?: { at?: number; signature?: string },
  ): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export function stripeSignature(payload: string, secret: string, at = Math.floor(Date.now() / 1000)): string {
  return `t=${at},v1=${createHmac('sha256', secret).update(`${at}.${payload}`).digest('hex')}`;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  const webhookSecret = `whsec_${randomBytes(12).toString('hex')}`;
  const sessions: FakeStripe['sessions'] = [];
  let base = '';
  // Set once the server listens; the hosted page's handler reads it later.
  let fake: FakeStripe | undefined = undefined;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString('utf8')));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      // The hosted checkout page a person is sent to: "Pay" sends the paid event to the platform, as Stripe does,
      // and goes back to the session's success address.
      const pay = /^\/pay\/(cs_test_[a-f0-9]+)$/.exec(req.url ?? '');
      if (pay) {
        const session = sessions.find((s) => s.id === pay[1]);
        if (!session) return reply(404, { error: { message: 'No such checkout session' } });
        if (req.method === 'GET') {
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
          return res.end(
            `<!doctype html><title>Fake Stripe checkout</title><h1>Pay for ${session.fields['metadata[plan]']}</h1>` +
              `<form method="post"><button>Pay</button></form><a href="${session.fields.cancel_url}">Back</a>`,
          );
        }
        void fake!.pay(session.id, fake!.webhookUrl).then(() => {
          res.writeHead(303, { Location: session.fields.success_url });
          res.end();
        });
        return;
      }
      if (req.headers.authorization !== `Bearer ${secretKey}`) {
        return reply(401, { error: { type: 'invalid_request_error', message: 'Invalid API Key provided' } });
      }
      if (req.method === 'POST' && req.url === '/v1/checkout/sessions') {
        const fields = Object.fromEntries(new URLSearchParams(raw));
        if (!fields['line_items[0][price]'] || !fields.success_url || !fields.mode) {
          return reply(400, { error: { type: 'invalid_request_error', message: 'Missing required param' } });
        }
        const id = `cs_test_${randomBytes(10).toString('hex')}`;
        sessions.push({ id, fields });
        return reply(200, { id, object: 'checkout.session', url: `${base}/pay/${id}`, mode: fields.mode });
      }
      reply(404, { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${req.url})` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const send: FakeStripe['send'] = async (webhookUrl, event, opts = {}) => {
    const payload = JSON.stringify({
      id: event.id,
      object: 'event',
      type: event.type,
      created: Math.floor(Date.now() / 1000),
      data: { object: event.object },
    });
    const res = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        'Stripe-Signature': opts.signature ?? stripeSignature(payload, webhookSecret, opts.at),
      },
      body: payload,
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as unknown) : undefined };
  };

  fake = {
    url: base,
    webhookUrl: '',
    secretKey,
    webhookSecret,
    sessions,
    send,
    async pay(sessionId, webhookUrl) {
      const session = sessions.find((s) => s.id === sessionId);
      if (!session) throw new Error(`no checkout session ${sessionId}`);
      const eventId = `evt_${randomBytes(10).toString('hex')}`;
      const result = await send(webhookUrl, {
        id: eventId,
        type: 'checkout.session.completed',
        object: {
          id: sessionId,
          object: 'checkout.session',
          client_reference_id: session.fields.client_reference_id ?? null,
          metadata: {
            workspace_id: session.fields['metadata[workspace_id]'],
            plan: session.fields['metadata[plan]'],
          },
          payment_status: 'paid',
          status: 'complete',
          subscription: `sub_${randomBytes(8).toString('hex')}`,
        },
      });
      return { ...result, eventId };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
  return fake;
}
