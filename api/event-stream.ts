import { PassThrough } from 'node:stream';
import type { AppContext } from './context';

export type { StreamTap } from './context';

export interface EventStream {
  write(frame: unknown): void;
  end(): void;
}

/**
 * Makes the response a Server-Sent Events stream. The frames outlive the client: Koa destroys the response body when
 * the client goes, so they are produced here and copied to the wire only while it is open, and every tap on
 * `ctx.state.streamTaps` sees all of them, the end included, whether or not anyone is still reading.
 */
export function openEventStream(ctx: AppContext): EventStream {
  const wire = new PassThrough();
  const taps = ctx.state.streamTaps ?? [];
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setTimeout(0);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
  ctx.body = wire;
  ctx.state.streamed = true;
  let ended = false;
  return {
    write(frame) {
      if (ended) return;
      const chunk = Buffer.from(`data: ${JSON.stringify(frame)}\n\n`);
      for (const tap of taps) tap.data(chunk);
      if (!wire.destroyed) wire.write(chunk);
    },
    end() {
      if (ended) return;
      ended = true;
      // The response ends once every tap has what it needs (the idempotency record stored): a client that repeats
      // the request after the stream ended gets the replay, never "still in progress".
      void Promise.allSettled(taps.map(async (tap) => tap.end())).then(() => {
        if (!wire.destroyed) wire.end();
      });
    },
  };
}
