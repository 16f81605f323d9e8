import { describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { http, newBot, ownerSession } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';

/**
 * Keys do not outlive the people who made them (issue 17, item 6; docs/decisions/106-builder-key-issuers.md):
 * every builder key records its issuer and device, the owner lists and revokes them one by one, and a
 * person removed (or an admin made an operator) takes their builder keys and pending invitations with them.
 */

/** A builder-key call (MCP `tools/list`): 200 while the key is in force, 401 `invalid_key` once revoked. */
const useKey = (key: string) =>
  http('/v1/api/mcp', {
    headers: {
      Authorization: `Bearer ${key}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2025-11-25',
    },
    rawBody: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  });

const listKeys = (session: Record<string, string>) => http('/v1/dashboard/team/builder-keys', { headers: session });
const revokeKey = (session: Record<string, string>, id: string) =>
  http(`/v1/dashboard/team/builder-keys/${id}`, { method: 'DELETE', headers: session });

/** The owner pairs a client named `device`; returns the key the client collects. */
async function pair(owner: Record<string, string>, device: string): Promise<string> {
  const started = await http('/v1/mcp-pair/start', { body: { device } });
  expect(started.status).toBe(201);
  const approved = await http(`/v1/dashboard/mcp-pair/${started.body.code}/approve`, {
    method: 'POST',
    headers: owner,
  });
  expect(approved.status).toBe(200);
  const polled = await http(
    `/v1/mcp-pair/poll?code=${encodeURIComponent(started.body.code)}&secret=${encodeURIComponent(started.body.secret)}`,
  );
  expect(polled.body.status).toBe('ok');
  return polled.body.constructor_key;
}

describe('builder keys and the people who issued them', () => {
  it('lists keys with their issuer and device; removing an admin revokes their keys and invitations; the owner revokes one key', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const adminPerson = await addMember(bot, 'admin');
    const admin = await sessionOf(adminPerson);

    // The admin reissues the agent's builder key from the dashboard (it revokes earlier ones: rule 5), and invites.
    const issued = await http(`/v1/dashboard/bots/${bot.bot_id}/builder-key`, { method: 'POST', headers: admin });
    expect(issued.status).toBe(200);
    const adminKey: string = issued.body.key;
    expect((await useKey(adminKey)).status).toBe(200);
    const invitedEmail = `invited+${randomUUID().slice(0, 8)}@example.com`;
    const invited = await http('/v1/dashboard/team/invitations', {
      headers: admin,
      body: { email: invitedEmail, role: 'operator' },
    });
    expect(invited.status).toBe(201);
    const token = new URLSearchParams(new URL(invited.body.invite_url).hash.slice(1)).get('token');

    // Then the owner pairs a client of their own.
    const pairedKey = await pair(owner, 'Claude Desktop on ana-laptop');

    const ownerView = await listKeys(owner);
    expect(ownerView.status).toBe(200);
    const keys = ownerView.body.builder_keys as Record<string, any>[];
    expect(keys).toHaveLength(2);
    const [paired, fromAdmin] = keys; // newest first
    expect(paired).toMatchObject({
      label: 'Claude Desktop on ana-laptop',
      issued_via: 'pairing',
      bot_id: null,
      issued_by: { email: bot.email },
    });
    expect(fromAdmin).toMatchObject({
      issued_via: 'dashboard',
      bot_id: bot.bot_id,
      issued_by: { id: adminPerson.userId, email: adminPerson.email },
      fingerprint: `ck_…${adminKey.slice(-4)}`,
    });
    // The key was used above: its last use is recorded (to the minute); the key itself is never in the list.
    expect(fromAdmin.last_used_at).toEqual(expect.any(Number));
    expect(fromAdmin.created_at).toEqual(expect.any(Number));
    expect(JSON.stringify(ownerView.body)).not.toContain(adminKey);
    expect(JSON.stringify(ownerView.body)).not.toContain(pairedKey);

    // An admin sees and revokes only the keys they issued: the owner's is not theirs (404, as the list hides it).
    const adminView = await listKeys(admin);
    expect((adminView.body.builder_keys as { id: string }[]).map((k) => k.id)).toEqual([fromAdmin.id]);
    expect((await revokeKey(admin, paired.id)).status).toBe(404);
    expect((await useKey(pairedKey)).status).toBe(200);

    // The owner removes the admin: their key stops, their pending invitation can no longer be accepted.
    const removed = await http(`/v1/dashboard/team/members/${adminPerson.userId}`, {
      method: 'DELETE',
      headers: owner,
    });
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({
      status: 'removed',
      revoked_builder_keys: 1,
      revoked_invitations: 1,
      // The only key they were shown was the builder key they issued, revoked with them: nothing to rotate.
      keys_seen: [],
      rotated_keys: [],
    });
    const refused = await useKey(adminKey);
    expect([refused.status, refused.body.code]).toEqual([401, 'invalid_key']);
    const shown = await http('/v1/auth/invitation', { body: { token } });
    expect(shown.status).toBe(404);
    const accepted = await http('/v1/auth/invitation/accept', {
      body: { token, password: 'a long enough password' },
    });
    expect(accepted.status).toBe(404);
    expect((await http('/v1/dashboard/team', { headers: owner })).body.invitations).toEqual([]);
    // The owner's paired client is not theirs to take: it still works.
    expect((await useKey(pairedKey)).status).toBe(200);

    // The owner revokes the paired key: it stops at once and leaves the list; a second revocation is 404.
    expect((await revokeKey(owner, paired.id)).body).toEqual({ status: 'revoked' });
    expect((await useKey(pairedKey)).status).toBe(401);
    expect((await listKeys(owner)).body.builder_keys).toEqual([]);
    expect((await revokeKey(owner, paired.id)).status).toBe(404);
  });

  it('an admin made an operator loses the builder keys and invitations they issued; operators cannot list keys', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const adminPerson = await addMember(bot, 'admin');
    const admin = await sessionOf(adminPerson);
    const issued = await http(`/v1/dashboard/bots/${bot.bot_id}/builder-key`, { method: 'POST', headers: admin });
    const invited = await http('/v1/dashboard/team/invitations', {
      headers: admin,
      body: { email: `invited+${randomUUID().slice(0, 8)}@example.com`, role: 'admin' },
    });
    expect(invited.status).toBe(201);

    const demoted = await http(`/v1/dashboard/team/members/${adminPerson.userId}`, {
      method: 'PATCH',
      headers: owner,
      body: { role: 'operator' },
    });
    expect(demoted.status).toBe(200);
    expect(demoted.body).toMatchObject({ role: 'operator', revoked_builder_keys: 1, revoked_invitations: 1 });
    expect((await useKey(issued.body.key)).status).toBe(401);
    expect((await listKeys(admin)).status).toBe(403);

    // Made an admin again: nothing to revoke, and nothing comes back.
    const promoted = await http(`/v1/dashboard/team/members/${adminPerson.userId}`, {
      method: 'PATCH',
      headers: owner,
      body: { role: 'admin' },
    });
    expect(promoted.body).toMatchObject({ role: 'admin', revoked_builder_keys: 0, revoked_invitations: 0 });
    expect((await useKey(issued.body.key)).status).toBe(401);
  });
});
