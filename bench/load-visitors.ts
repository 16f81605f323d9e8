import http from 'node:http';
import type { Db } from '../lib/db';
import { upsertSource } from '../lib/knowledge/store';
import type { StreamedTurn } from './stream-integrity';

/* The load benchmark's visitors: who they are (their addresses), what they ask, and one streamed turn as they read it. */

export interface Turn {
  /** The question's number, which the fake model sees in the prompt. */
  question: number;
  /** When the request was sent, in epoch milliseconds (the fake model's clock). */
  sentAt: number;
  startedAt: number;
  firstMs: number;
  endMs: number;
  first: boolean;
}

/** A frame of the chat stream (POST /v1/api/chat/stream): told apart by which field is present. */
interface StreamFrame {
  delta?: string;
  notice?: string;
  error?: string;
  code?: string;
  done?: boolean;
}

/**
 * The words of the benchmark's knowledge base: 400 made-up four-letter words (too short for the prefix matches
 * retrieval adds to longer ones), each in about one sentence in 400.
 */
const KNOWLEDGE_WORDS = Array.from(
  { length: 400 },
  (_, n) =>
    `q${[n % 26, Math.floor(n / 26) % 26, Math.floor(n / 676)].map((d) => String.fromCharCode(97 + d)).join('')}`,
);

/** A visitor's question about the knowledge base: two of its words, a different pair from one question to the next. */
function topicOf(question: number): string {
  const w = KNOWLEDGE_WORDS;
  return `where is the ${w[question % w.length]} near the ${w[(question * 7 + 3) % w.length]}?`;
}

/**
 * `--knowledge N`: N sources of about 120 fragments each (4 000 short sentences), written as the API writes them,
 * so every turn's retrieval ranks real fragments (each of a question's two words is in about ten fragments a source).
 */
export async function writeKnowledge(db: Db, botId: string, sources: number): Promise<void> {
  const w = KNOWLEDGE_WORDS;
  for (let s = 0; s < sources; s++) {
    const text = Array.from({ length: 4000 }, (_, i) => `The ${w[(i * 7 + s) % w.length]} is number ${i}.`).join(' ');
    await upsertSource(db, { botId, sourceId: `bench-${s}`, text });
  }
  if (sources) await db.query('ANALYZE knowledge_fragments');
}

/**
 * The loopback address visitor `n` connects from, when the visitors are spread over `addresses` of them (0: one
 * each): 127.0.0.1, 127.0.0.2, … 127.0.0.254, 127.0.1.1, … — all loopback on Linux, so no alias is needed, and the
 * API sees each as a client of its own (its rate windows are per key and address).
 */
export function visitorAddress(n: number, addresses: number): string {
  const i = addresses ? n % addresses : n;
  return `127.0.${Math.floor(i / 254)}.${1 + (i % 254)}`;
}

/** What every visitor shares: the API, the bot's key, the connections, and what the model is asked to write. */
export interface VisitorSettings {
  api: string;
  secretKey: string;
  agent: http.Agent;
  /** Answers of about this many characters (the fake model's `[[fake:length-N]]`). */
  chars: number;
  /** With a knowledge base, each message asks about it (topicOf). */
  knowledgeSources: number;
  addressOf(visitor: number): string;
}

/**
 * The visitors' side: node:http (kept-alive connections, the body read as events), since the global fetch passes
 * every read through a web stream and a promise, CPU that this machine's platform would otherwise have. `inFlight`
 * holds the questions being answered; `state.streamed`, how every turn ended as its visitor saw it.
 */
export function streamingVisitors(settings: VisitorSettings) {
  const { api, agent, chars, knowledgeSources, addressOf } = settings;
  const headers = { 'X-Bot-Key': settings.secretKey, 'Content-Type': 'application/json' };
  let asked = 0;
  const inFlight = new Set<number>();
  const state = { streamed: [] as StreamedTurn[] };
  /**
   * One streamed turn: times to the first delta and to the end frame, from the request's start. Its frames are read
   * as the contract defines them, so what the visitor read can be compared with what was stored (stream-integrity.ts);
   * an error frame, or a stream without its end frame, fails the turn.
   */
  const streamTurn = (session: string, visitor: number): Promise<Omit<Turn, 'startedAt' | 'first'>> => {
    const started = performance.now();
    const sentAt = Date.now();
    const question = ++asked;
    const body = JSON.stringify({
      session_id: session,
      message:
        `[[fake:length-${chars}]] question ${question} from ${session.slice(0, 8)}` +
        (knowledgeSources ? `: ${topicOf(question)}` : ''),
    });
    inFlight.add(question);
    const seen: StreamedTurn = { question, text: '', ended: false };
    return new Promise<Omit<Turn, 'startedAt' | 'first'>>((resolve, reject) => {
      const req = http.request(
        `${api}/v1/api/chat/stream`,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'Content-Length': Buffer.byteLength(body) },
          localAddress: addressOf(visitor),
        },
        (res) => {
          res.setEncoding('utf8');
          let buffer = '';
          if (res.statusCode !== 200) {
            res.on('data', (d: string) => (buffer += d));
            res.on('end', () => reject(new Error(`stream ${res.statusCode}: ${buffer}`)));
            return;
          }
          let first = NaN;
          let end = NaN;
          res.on('data', (d: string) => {
            buffer += d;
            for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
              const frame = buffer.slice(0, cut);
              buffer = buffer.slice(cut + 2);
              for (const line of frame.split('\n')) {
                if (!line.startsWith('data: ')) continue;
                let f: StreamFrame;
                try {
                  f = JSON.parse(line.slice(6)) as StreamFrame;
                } catch {
                  f = { error: 'a frame that is not JSON', code: 'unparsable' };
                }
                if (f.notice) seen.notice = true;
                if (typeof f.delta === 'string') {
                  if (Number.isNaN(first)) first = performance.now() - started;
                  seen.text += f.delta;
                }
                if (f.error !== undefined && seen.error === undefined) seen.error = f.code ?? 'internal';
                if (f.done === true) {
                  end = performance.now() - started;
                  seen.ended = true;
                }
              }
            }
          });
          // 'close' comes after the end of the body, or when the connection broke off (then without an end frame).
          res.on('close', () => {
            state.streamed.push(seen);
            if (seen.error !== undefined) reject(new Error(`error frame: ${seen.error}`));
            else if (!seen.ended) reject(new Error('the stream ended without its end frame'));
            else resolve({ firstMs: first, endMs: end, question, sentAt });
          });
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    }).finally(() => inFlight.delete(question));
  };
  return { streamTurn, inFlight, state };
}
