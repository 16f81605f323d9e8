import ipaddr from 'ipaddr.js';
import { randomUUID } from 'node:crypto';
import type { Logger } from '../../lib/logger';
import type { AppMiddleware } from '../context';

// Spec, Request id: up to 64 characters of Latin letters, digits and `-` `_` `.` `:`; anything else is replaced.
const CLIENT_ID = /^[A-Za-z0-9\-_.:]{1,64}$/;

function isValidIp(ip: string): boolean {
  return ipaddr.isValid(ip);
}

export function requestId(logger: Logger): AppMiddleware {
  return async function requestIdMiddleware(ctx, next) {
    const sent = ctx.get('X-Request-Id');
    const id = CLIENT_ID.test(sent) ? sent : randomUUID();
    ctx.state.requestId = id;
    // The request's logger is made on first use: most requests of the hot paths never log more than one line.
    let log: Logger | undefined;
    Object.defineProperty(ctx.state, 'log', { get: () => (log ??= logger.child({ reqId: id })), configurable: true });
    ctx.state.input = {};
    // Rate buckets count per client address: behind trusted proxies, an X-Forwarded-For entry that is not an IP
    // address (forged or broken) is replaced by the connection's own.
    if (ctx.app.proxy && !isValidIp(ctx.ip)) ctx.request.ip = ctx.socket.remoteAddress ?? '';
    ctx.set('X-Request-Id', id);
    await next();
  };
}
