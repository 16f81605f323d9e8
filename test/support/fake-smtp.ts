import net from 'node:net';

/**
 * Fake SMTP: a real SMTP server on loopback (node:net only) speaking enough ESMTP (RFC 5321) for nodemailer, so a
 * test proves that the platform's e-mail really goes over the wire to a protocol peer.
 *
 *   const smtp = await startFakeSmtp();       // smtp.url === 'smtp://127.0.0.1:<port>'
 *   ... await smtp.waitFor(1, 10_000) ...     // the messages received so far, once there are at least 1
 *   await smtp.close();
 *
 * Supported: the 220 greeting, EHLO (advertising 8BITMIME, SMTPUTF8, SIZE, AUTH PLAIN LOGIN — never STARTTLS or
 * PIPELINING, so a client sends one command at a time in clear text), HELO, AUTH PLAIN / AUTH LOGIN (any credentials
 * are accepted and recorded), MAIL FROM, RCPT TO, DATA (dot-terminated, dot-unstuffed), RSET, NOOP, QUIT. Anything
 * else is 502; commands out of order are 503. A message is recorded when its terminating "." arrives, before the
 * 250 reply, so a client that saw its message accepted always finds it in `messages`.
 */
export interface SmtpMessage {
  /** The envelope sender (MAIL FROM), without angle brackets. */
  from: string;
  /** The envelope recipients (RCPT TO), in order. */
  to: string[];
  /** The message as transmitted (headers and body, CRLF line ends), after dot-unstuffing, without the final ".". */
  data: string;
  /** The credentials of an AUTH on the connection, if any. */
  auth?: { user: string; pass: string };
}

export interface FakeSmtp {
  url: string;
  port: number;
  messages: SmtpMessage[];
  /** Resolves with the messages once at least `n` were received; rejects after `timeoutMs`. */
  waitFor(n: number, timeoutMs?: number): Promise<SmtpMessage[]>;
  close(): Promise<void>;
}

const MAX_SIZE = 10 * 1024 * 1024;
const MAX_LINE = 64 * 1024;

/** The address inside `<…>` after `MAIL FROM:` / `RCPT TO:` (ESMTP parameters after it are ignored). */
function pathArg(rest: string): string | undefined {
  const m = /^\s*<([^>]*)>/.exec(rest) ?? /^\s*([^\s<>]+)/.exec(rest);
  return m ? m[1] : undefined;
}

/** `greetingDelayMs`: the 220 greeting waits this long, as a slow or distant mail server would. */
export async function startFakeSmtp(opts: { hostname?: string; greetingDelayMs?: number } = {}): Promise<FakeSmtp> {
  const hostname = opts.hostname ?? 'fake-smtp.test';
  const messages: SmtpMessage[] = [];
  const waiters = new Set<() => void>();
  const sockets = new Set<net.Socket>();

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);

    let buffer: Buffer = Buffer.alloc(0);
    let greeted = false;
    let from: string | undefined;
    let to: string[] = [];
    let auth: SmtpMessage['auth'];
    let mode: 'command' | 'data' | 'auth-plain' | 'auth-login-user' | 'auth-login-pass' = 'command';
    let dataLines: Buffer[] = [];
    let dataSize = 0;
    let loginUser = '';

    const reply = (code: number, ...lines: string[]) => {
      if (socket.destroyed) return;
      const text = lines.length ? lines : [''];
      socket.write(text.map((l, i) => `${code}${i < text.length - 1 ? '-' : ' '}${l}`.trimEnd() + '\r\n').join(''));
    };
    const resetTransaction = () => {
      from = undefined;
      to = [];
    };
    const decodePlain = (b64: string) => {
      // authzid \0 authcid \0 passwd
      const parts = Buffer.from(b64, 'base64').toString('utf8').split('\0');
      if (parts.length !== 3) return false;
      auth = { user: parts[1], pass: parts[2] };
      return true;
    };

    const onDataLine = (line: Buffer) => {
      if (line.length === 1 && line[0] === 0x2e) {
        mode = 'command';
        if (dataSize > MAX_SIZE) {
          reply(552, '5.3.4 Message too big');
        } else {
          messages.push({
            from: from ?? '',
            to: [...to],
            data: Buffer.concat(dataLines.flatMap((l) => [l, Buffer.from('\r\n')])).toString('utf8'),
            ...(auth ? { auth } : {}),
          });
          for (const w of [...waiters]) w();
          reply(250, `2.0.0 Ok: queued as fake-${messages.length}`);
        }
        dataLines = [];
        dataSize = 0;
        resetTransaction();
        return;
      }
      // Dot-unstuffing (RFC 5321 4.5.2): a line starting with "." had one added by the client.
      const unstuffed = line[0] === 0x2e ? line.subarray(1) : line;
      dataSize += unstuffed.length + 2;
      if (dataSize <= MAX_SIZE) dataLines.push(unstuffed);
    };

    const onCommand = (raw: string) => {
      if (mode === 'auth-plain') {
        mode = 'command';
        if (raw === '*') return reply(501, '5.7.0 Authentication cancelled');
        return decodePlain(raw) ? reply(235, '2.7.0 Authentication successful') : reply(535, '5.7.8 Bad credentials');
      }
      if (mode === 'auth-login-user') {
        if (raw === '*') {
          mode = 'command';
          return reply(501, '5.7.0 Authentication cancelled');
        }
        loginUser = Buffer.from(raw, 'base64').toString('utf8');
        mode = 'auth-login-pass';
        return reply(334, Buffer.from('Password:').toString('base64'));
      }
      if (mode === 'auth-login-pass') {
        mode = 'command';
        if (raw === '*') return reply(501, '5.7.0 Authentication cancelled');
        auth = { user: loginUser, pass: Buffer.from(raw, 'base64').toString('utf8') };
        return reply(235, '2.7.0 Authentication successful');
      }

      const m = /^([A-Za-z]+)(?:\s+(.*))?$/.exec(raw);
      const verb = (m?.[1] ?? '').toUpperCase();
      const arg = m?.[2] ?? '';
      switch (verb) {
        case 'EHLO':
          if (!arg) return reply(501, '5.5.4 EHLO needs a domain');
          greeted = true;
          resetTransaction();
          return reply(250, `${hostname} Hello ${arg}`, '8BITMIME', 'SMTPUTF8', `SIZE ${MAX_SIZE}`, 'AUTH PLAIN LOGIN');
        case 'HELO':
          if (!arg) return reply(501, '5.5.4 HELO needs a domain');
          greeted = true;
          resetTransaction();
          return reply(250, hostname);
        case 'AUTH': {
          if (!greeted) return reply(503, '5.5.1 EHLO first');
          if (auth) return reply(503, '5.5.1 Already authenticated');
          const [mech, initial] = arg.split(/\s+/);
          switch ((mech ?? '').toUpperCase()) {
            case 'PLAIN':
              if (initial)
                return decodePlain(initial)
                  ? reply(235, '2.7.0 Authentication successful')
                  : reply(535, '5.7.8 Bad credentials');
              mode = 'auth-plain';
              return reply(334);
            case 'LOGIN':
              if (initial) {
                loginUser = Buffer.from(initial, 'base64').toString('utf8');
                mode = 'auth-login-pass';
                return reply(334, Buffer.from('Password:').toString('base64'));
              }
              mode = 'auth-login-user';
              return reply(334, Buffer.from('Username:').toString('base64'));
            default:
              return reply(504, '5.5.4 Unrecognized authentication type');
          }
        }
        case 'MAIL': {
          if (!greeted) return reply(503, '5.5.1 EHLO or HELO first');
          if (from !== undefined) return reply(503, '5.5.1 Sender already given');
          const rest = /^FROM:(.*)$/i.exec(arg);
          const address = rest ? pathArg(rest[1]) : undefined;
          if (address === undefined) return reply(501, '5.5.4 Syntax: MAIL FROM:<address>');
          from = address;
          return reply(250, '2.1.0 Ok');
        }
        case 'RCPT': {
          if (from === undefined) return reply(503, '5.5.1 MAIL first');
          const rest = /^TO:(.*)$/i.exec(arg);
          const address = rest ? pathArg(rest[1]) : undefined;
          if (!address) return reply(501, '5.5.4 Syntax: RCPT TO:<address>');
          to.push(address);
          return reply(250, '2.1.5 Ok');
        }
        case 'DATA':
          if (arg) return reply(501, '5.5.4 DATA takes no argument');
          if (from === undefined) return reply(503, '5.5.1 MAIL first');
          if (!to.length) return reply(503, '5.5.1 RCPT first');
          mode = 'data';
          return reply(354, 'End data with <CR><LF>.<CR><LF>');
        case 'RSET':
          resetTransaction();
          return reply(250, '2.0.0 Ok');
        case 'NOOP':
          return reply(250, '2.0.0 Ok');
        case 'QUIT':
          reply(221, '2.0.0 Bye');
          socket.end();
          return;
        case 'STARTTLS':
          return reply(502, '5.5.1 STARTTLS not offered');
        default:
          return reply(502, '5.5.2 Command not recognized');
      }
    };

    socket.on('data', (chunk: Buffer) => {
      buffer = buffer.length ? Buffer.concat([buffer, chunk]) : chunk;
      for (;;) {
        const nl = buffer.indexOf(0x0a);
        if (nl < 0) {
          if (buffer.length > MAX_LINE && mode !== 'data') {
            reply(500, '5.5.2 Line too long');
            socket.end();
          }
          return;
        }
        const end = nl > 0 && buffer[nl - 1] === 0x0d ? nl - 1 : nl;
        const line = buffer.subarray(0, end);
        buffer = buffer.subarray(nl + 1);
        if (mode === 'data') onDataLine(line);
        else onCommand(line.toString('utf8'));
        if (socket.destroyed || socket.writableEnded) return;
      }
    });

    const greet = () => reply(220, `${hostname} ESMTP fake-smtp ready`);
    if (opts.greetingDelayMs) setTimeout(greet, opts.greetingDelayMs);
    else greet();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as net.AddressInfo).port;

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    waitFor(n, timeoutMs = 10_000) {
      if (messages.length >= n) return Promise.resolve([...messages]);
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < n) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...messages]);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`fake SMTP: ${messages.length} message(s) after ${timeoutMs} ms, waited for ${n}`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      });
    },
  };
}

/**
 * Reads a received message's headers and text body: folded headers are unfolded, RFC 2047 encoded words decoded, and
 * a single-part body decoded from quoted-printable or base64. Enough for the plain-text mail nodemailer builds.
 */
export function parseMessage(data: string): { headers: Record<string, string>; subject: string; text: string } {
  const split = data.indexOf('\r\n\r\n');
  const head = split < 0 ? data : data.slice(0, split);
  const rawBody = split < 0 ? '' : data.slice(split + 4);
  const headers: Record<string, string> = {};
  for (const field of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = field.indexOf(':');
    if (colon > 0) headers[field.slice(0, colon).trim().toLowerCase()] = decodeWords(field.slice(colon + 1).trim());
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  let text = rawBody;
  if (encoding === 'quoted-printable') text = decodeQp(rawBody);
  else if (encoding === 'base64') text = Buffer.from(rawBody.replace(/\s+/g, ''), 'base64').toString('utf8');
  return { headers, subject: headers.subject ?? '', text: text.replace(/\r\n$/, '') };
}

function decodeQp(s: string): string {
  const bytes = s
    .replace(/=\r\n/g, '')
    .split(/(=[0-9A-Fa-f]{2})/)
    .map((part) =>
      /^=[0-9A-Fa-f]{2}$/.test(part) ? Buffer.from([parseInt(part.slice(1), 16)]) : Buffer.from(part, 'utf8'),
    );
  return Buffer.concat(bytes).toString('utf8');
}

function decodeWords(value: string): string {
  return value
    .replace(/(=\?[^?]+\?[BbQq]\?[^?]*\?=)\s+(?==\?)/g, '$1')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_all, _charset: string, enc: string, text: string) =>
      enc.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQp(text.replace(/_/g, ' ')),
    );
}
