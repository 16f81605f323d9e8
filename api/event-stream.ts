import type { AppContext } from './context';

export type { StreamTap } from './context';

export interface EventStream {
  write(frame: unknown): void;
  end(): void;
}

/**
 * Makes the response a Server-Sent Events stream. The frames outlive the client: they are produced here and copied to
 * the connection only while it is open, and every tap on `ctx.state.streamTaps` sees all of them, the end included,
 * whether or not anyone is still reading.
 *
 * The frames go straight to the connection, Koa told not to respond: a stream body would pass every frame through a
 * PassThrough and the response through `stream.pipeline`, whose AbortController and DOMException per response cost
 * more of the API's CPU than the stream's frames (docs/decisions/119-streamed-turn-cpu.md). The headers are
 * sent here, so everything that sets one does so before the handler opens the stream (all middleware does, on the
 * way in; an error after this point is an error frame).
 */
export function openEventStream(ctx: AppContext): EventStream {
  const res = ctx.res;
  const taps = ctx.state.streamTaps ?? [];
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setTimeout(0);
  ctx.status = 200;
  ctx.type = 'text/event-stream';
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no'); // nginx: do not buffer the stream
  ctx.state.streamed = true;
  ctx.respond = false;
  res.flushHeaders();
  const open = () => !res.destroyed && !res.writableEnded;
  let ended = false;
  return {
    write(frame) {
      if (ended) return;
      const chunk = Buffer.from(`data: ${JSON.stringify(frame)}\n\n`);
      for (const tap of taps) tap.data(chunk);
      if (open()) res.write(chunk);
    },
    end() {
      if (ended) return;
      ended = true;
      // The response ends once every tap has what it needs (the idempotency record stored): a client that repeats
      // the request after the stream ended gets the replay, never "still in progress".
      void Promise.allSettled(taps.map(async (tap) => tap.end())).then(() => {
        if (open()) res.end();
      });
    },
  };
}
