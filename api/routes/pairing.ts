import type { PairingService } from '../../lib/builder/pairing';
import { LIMITS } from '../../lib/limits';
import {
  PairPollQuery,
  PairPollResponse,
  PairStartRequest,
  PairStartResponse,
  PairingParams,
  PairingView,
} from '../../lib/schemas/pairing';
import type { AppDeps } from '../deps';
import { ALL_ROLES, type RouteDef, route } from '../route';
import { dashboardLinkBase, sessionUser } from '../session';
import { clientBucket } from '../../lib/client-address';

/**
 * Builder key pairing (contract, Builder key pairing; docs/decisions/067-pairing-flow.md): the client's two calls (no credential: the
 * secret of the start answer is the client's proof) and the approval page's two dashboard calls (session).
 */
export function pairingRoutes(deps: AppDeps, pairing: PairingService): RouteDef[] {
  const dashboard = {
    tag: 'Dashboard',
    session: true,
    // Everyone may look; approving is the owner's (the service says so, and the page shows it).
    roles: ALL_ROLES,
    unstable: true,
    params: PairingParams,
  } as const;
  return [
    route({
      method: 'post',
      path: '/v1/mcp-pair/start',
      operationId: 'mcpPairStart',
      tag: 'Builder',
      summary: 'Starts pairing a builder client: answers the page the owner approves on, the code and a secret.',
      description:
        `Show the user \`verify_url\` and \`code\`; poll \`GET /v1/mcp-pair/poll\` with \`code\` and \`secret\` every \`interval\` seconds. ` +
        `The pairing expires after ${LIMITS.pairing.lifetimeSeconds / 60} minutes unapproved; ` +
        `${LIMITS.pairing.startsPerAddress} starts a minute per client address.`,
      body: PairStartRequest,
      responses: { 201: { description: 'Pairing started', schema: PairStartResponse } },
      errors: ['bad_request', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { body }) => {
        const started = await pairing.start(body.device, clientBucket(ctx.ip));
        const base = dashboardLinkBase(deps);
        ctx.set('Cache-Control', 'no-store');
        return {
          verify_url: `${base}/connect?code=${encodeURIComponent(started.code)}`,
          code: started.code,
          secret: started.secret,
          expires_in: Math.max(0, Math.round((started.expiresAt.getTime() - Date.now()) / 1000)),
          interval: LIMITS.pairing.pollIntervalSeconds,
        };
      },
    }),
    route({
      method: 'get',
      path: '/v1/mcp-pair/poll',
      operationId: 'mcpPairPoll',
      tag: 'Builder',
      summary: 'Asks whether the owner approved; `ok` carries the builder key `ck_`, once.',
      description:
        'Statuses: `pending` (poll again), `ok` with `constructor_key` (answered exactly once), `expired` (unknown code, ' +
        'wrong secret, key already collected, or too late: start again). ' +
        `${LIMITS.pairing.pollsPerAddress} polls a minute per client address.`,
      query: PairPollQuery,
      responses: { 200: { description: 'Pairing status', schema: PairPollResponse } },
      errors: ['bad_request', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { query }) => {
        ctx.set('Cache-Control', 'no-store');
        return await pairing.poll(query.code, query.secret, clientBucket(ctx.ip));
      },
    }),
    route({
      ...dashboard,
      method: 'get',
      path: '/v1/dashboard/mcp-pair/{code}',
      operationId: 'dashboardDescribePairing',
      summary: 'The pairing a code names, for the approval page: device, status, expiry (never the key).',
      responses: { 200: { description: 'Pairing', schema: PairingView } },
      errors: ['unauthorized', 'not_found', 'bad_request', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        return await pairing.describe(params.code, sessionUser(ctx));
      },
    }),
    route({
      ...dashboard,
      method: 'post',
      path: '/v1/dashboard/mcp-pair/{code}/approve',
      operationId: 'dashboardApprovePairing',
      summary:
        'Approves a pairing: issues a builder key of the workspace for the client to collect. Owner only; earlier builder keys keep working. The key is not in this answer.',
      responses: { 200: { description: 'Approved', schema: PairingView } },
      errors: ['unauthorized', 'forbidden', 'not_found', 'bad_request', 'rate_limited', 'service_unavailable'],
      handler: async (ctx, { params }) => {
        return await pairing.approve(params.code, sessionUser(ctx));
      },
    }),
  ];
}
