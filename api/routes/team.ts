import type { AppDeps } from '../deps';
import { type RouteDef, route } from '../route';
import { StatusResponse } from '../../lib/schemas/auth';
import {
  BuilderKeyList,
  BuilderKeyParams,
  DepartureSetting,
  InvitationParams,
  InviteRequest,
  InviteResponse,
  MemberChanged,
  MemberParams,
  MemberRemoved,
  RoleChange,
  RotateSeenKeys,
  RotatedKeys,
  SeenKeyList,
  TeamView,
} from '../../lib/schemas/team';
import { dashboardLinkBase, sessionUser } from '../session';
import { LIMITS } from '../../lib/limits';

/**
 * The team (docs/decisions/085-roles-and-team.md): owners and admins see and manage it; the finer rules (only the owner changes
 * roles, nobody removes the owner or themself) are the team service's.
 */
export function teamRoutes(deps: AppDeps): RouteDef[] {
  return [...memberRoutes(deps), ...teamKeyRoutes(deps)];
}

/** The members and invitations of the workspace. */
function memberRoutes(deps: AppDeps): RouteDef[] {
  const { team } = deps.services;
  const common = { tag: 'Team', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'forbidden', 'service_unavailable'] as const;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/team',
      operationId: 'team',
      summary: "The workspace's members with their roles, and pending invitations.",
      responses: { 200: { description: 'Team', schema: TeamView } },
      errors: [...errs],
      handler: async (ctx) => {
        return await team.list(sessionUser(ctx));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/team/invitations',
      operationId: 'invite',
      summary: 'Invites a person by e-mail as an admin or an operator: a link valid 7 days, usable once.',
      description:
        'The link is e-mailed when SMTP is configured (otherwise written to the API log) and returned here to pass on. A pending invitation of the same address is replaced. 409 `already_member`. ' +
        `A workspace sends at most ${LIMITS.account.invitationsPerHour} invitations an hour and ${LIMITS.account.invitationsPerDay} a day (429 with Retry-After).`,
      body: InviteRequest,
      responses: { 201: { description: 'Invited', schema: InviteResponse } },
      errors: [...errs, 'bad_request', 'already_member', 'rate_limited'],
      handler: async (ctx, { body }) => {
        return await team.invite(sessionUser(ctx), body, dashboardLinkBase(deps));
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/team/invitations/{iid}',
      operationId: 'revokeInvitation',
      summary: 'Revokes a pending invitation: its link stops working.',
      params: InvitationParams,
      responses: { 200: { description: 'Revoked', schema: StatusResponse } },
      errors: [...errs, 'not_found'],
      handler: async (ctx, { params }) => {
        await team.revokeInvitation(sessionUser(ctx), params.iid);
        return { status: 'revoked' };
      },
    }),
    route({
      ...common,
      method: 'patch',
      path: '/v1/dashboard/team/members/{uid}',
      operationId: 'changeRole',
      summary: "Changes a member's role (admin or operator). The owner only; the owner's own role does not change.",
      description:
        'An admin made an operator loses the builder keys and pending invitations they issued; the answer counts them, ' +
        'and lists the keys in force they were shown (`keys_seen`), or the new values when the workspace rotates them at once.',
      params: MemberParams,
      body: RoleChange,
      responses: { 200: { description: 'Member', schema: MemberChanged } },
      errors: [...errs, 'bad_request', 'not_found'],
      handler: async (ctx, { params, body }) => {
        return await team.changeRole(sessionUser(ctx), params.uid, body.role);
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/team/members/{uid}',
      operationId: 'removeMember',
      summary: 'Removes a member: their account and sessions end at once. Never the owner, never yourself.',
      description:
        'The builder keys and pending invitations they issued are revoked with them; the answer counts them, and lists ' +
        'the keys in force they were shown (`keys_seen`), or the new values when the workspace rotates them at once.',
      params: MemberParams,
      responses: { 200: { description: 'Removed', schema: MemberRemoved } },
      errors: [...errs, 'not_found'],
      handler: async (ctx, { params }) => {
        return { status: 'removed', ...(await team.remove(sessionUser(ctx), params.uid)) };
      },
    }),
  ];
}

/** Builder keys and the keys people who left were shown. */
function teamKeyRoutes(deps: AppDeps): RouteDef[] {
  const { team, bots } = deps.services;
  const common = { tag: 'Team', session: true, unstable: true } as const;
  const errs = ['unauthorized', 'forbidden', 'service_unavailable'] as const;
  return [
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/team/builder-keys',
      operationId: 'listBuilderKeys',
      summary: "The workspace's builder keys in force, with who issued each, the device, created and last used.",
      description: 'The owner sees every one; an admin the ones they issued. Fingerprints only, never a key.',
      responses: { 200: { description: 'Builder keys', schema: BuilderKeyList } },
      errors: [...errs],
      handler: async (ctx) => {
        return { builder_keys: await bots.listBuilderKeys(sessionUser(ctx)) };
      },
    }),
    route({
      ...common,
      method: 'delete',
      path: '/v1/dashboard/team/builder-keys/{kid}',
      operationId: 'revokeBuilderKey',
      summary: 'Revokes one builder key: the program using it stops at once. The owner any; an admin their own.',
      params: BuilderKeyParams,
      responses: { 200: { description: 'Revoked', schema: StatusResponse } },
      errors: [...errs, 'not_found'],
      handler: async (ctx, { params }) => {
        await bots.revokeBuilderKey(sessionUser(ctx), params.kid);
        return { status: 'revoked' };
      },
    }),
    route({
      ...common,
      method: 'get',
      path: '/v1/dashboard/team/seen-keys',
      operationId: 'seenKeys',
      summary: 'The keys in force that people who left the team, or are operators now, were shown; fingerprints only.',
      description:
        'A person is shown a key when they create an agent or reissue one. Rotate them with ' +
        '`POST /v1/dashboard/team/seen-keys/rotate`.',
      responses: { 200: { description: 'Seen keys', schema: SeenKeyList } },
      errors: [...errs],
      handler: async (ctx) => {
        ctx.set('Cache-Control', 'no-store');
        return await team.seenKeys(sessionUser(ctx));
      },
    }),
    route({
      ...common,
      method: 'post',
      path: '/v1/dashboard/team/seen-keys/rotate',
      operationId: 'rotateSeenKeys',
      summary: 'Rotates every key in force that people who left (or one of them, `user_id`) were shown, in one action.',
      description:
        "A bot's secret key, identity and webhook secrets are reissued (the old ones stop at once; the new values are in " +
        'this answer only); a builder key they saw is revoked. Idempotent: a repeat finds nothing left to rotate.',
      body: RotateSeenKeys,
      responses: { 200: { description: 'Rotated', schema: RotatedKeys } },
      errors: [...errs, 'bad_request'],
      handler: async (ctx, { body }) => {
        ctx.set('Cache-Control', 'no-store');
        return await team.rotateSeenKeys(sessionUser(ctx), body.user_id);
      },
    }),
    route({
      ...common,
      method: 'put',
      path: '/v1/dashboard/team/seen-keys/settings',
      operationId: 'setRotateKeysOnDeparture',
      summary: "Whether the keys a departing person saw are rotated at once (the owner's choice; default false).",
      body: DepartureSetting,
      responses: { 200: { description: 'Setting', schema: DepartureSetting } },
      errors: [...errs, 'bad_request'],
      handler: async (ctx, { body }) => {
        return await team.setRotateOnDeparture(sessionUser(ctx), body.rotate_keys_on_departure);
      },
    }),
  ];
}
