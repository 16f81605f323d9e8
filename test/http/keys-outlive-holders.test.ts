import { describe, expect, it } from '@jest/globals';
import { http, newBot, ownerSession } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';

/**
 * Keys that outlive their holder (issue 40, item 7; docs/decisions/142-keys-outlive-holders.md): a person who creates an
 * agent or reissues a key is recorded as shown it; when they are removed, or an admin is made an operator, the keys
 * still in force they saw are listed (in the answer and on the team page) and rotated in one action — or at once,
 * when the owner set the workspace so.
 */

type Headers = Record<string, string>;

/** A call with the secret key: 200 while it is in force, 401 once it is not. */
const useSecret = (key: string) => http('/v1/api/knowledge', { key });

const seen = (session: Headers) => http('/v1/dashboard/team/seen-keys', { headers: session });
const rotate = (session: Headers, body: Record<string, unknown> = {}) =>
  http('/v1/dashboard/team/seen-keys/rotate', { headers: session, body });
const botView = async (session: Headers, botId: string) =>
  (await http(`/v1/dashboard/bots/${botId}`, { headers: session })).body;

/** An admin creates an agent (shown all its keys) and reissues its identity secret (shown the new one). */
async function adminWithAgent(owner: Headers, bot: Awaited<ReturnType<typeof newBot>>) {
  const person = await addMember(bot, 'admin');
  const admin = await sessionOf(person);
  const created = await http('/v1/dashboard/bots', { headers: admin, body: { name: 'Support agent' } });
  expect(created.status).toBe(201);
  const agent = created.body.bot.id as string;
  const identity = await http(`/v1/dashboard/bots/${agent}/identity-secret`, { method: 'POST', headers: admin });
  expect(identity.status).toBe(200);
  // The owner's own reissue of the webhook secret: after it, what the admin saw of it no longer works.
  const webhook = await http(`/v1/dashboard/bots/${agent}/webhook-secret`, { method: 'POST', headers: owner });
  expect(webhook.status).toBe(200);
  return { person, admin, agent, keys: created.body.keys, identity: identity.body.key as string };
}

const fp = (key: string) => `${key.slice(0, key.indexOf('_') + 1)}…${key.slice(-4)}`;

describe('keys a removed admin saw', () => {
  it('are listed in the removal answer and on the team page, and rotated in one idempotent action', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const { person, agent, keys, identity } = await adminWithAgent(owner, bot);
    expect((await useSecret(keys.secret_key)).status).toBe(200);

    const removed = await http(`/v1/dashboard/team/members/${person.userId}`, { method: 'DELETE', headers: owner });
    expect(removed.status).toBe(200);
    // Their builder key went with them (they issued it); the secret key and the identity secret they saw still work:
    // listed, by fingerprint only. The webhook secret they saw was reissued by the owner since: not listed.
    const seenBy = { id: person.userId, email: person.email, now: 'removed' };
    const expected = [
      { bot_id: agent, bot_name: 'Support agent', kind: 'secret', fingerprint: fp(keys.secret_key), seen_by: seenBy },
      { bot_id: agent, bot_name: 'Support agent', kind: 'identity', fingerprint: fp(identity), seen_by: seenBy },
    ].map((k) => expect.objectContaining({ ...k, shown_at: expect.any(Number) }));
    expect(removed.body).toEqual({
      status: 'removed',
      revoked_builder_keys: 1,
      revoked_invitations: 0,
      keys_seen: expected,
      rotated_keys: [],
    });
    expect(JSON.stringify(removed.body)).not.toContain(keys.secret_key);
    const listed = await seen(owner);
    expect(listed.body).toEqual({ seen_keys: expected, rotate_keys_on_departure: false });
    // The bot's own keys the owner was shown at bootstrap are nobody's who left: not listed.
    expect(listed.body.seen_keys.map((k: { bot_id: string }) => k.bot_id)).not.toContain(bot.bot_id);

    // Rotate them all: the old keys stop at once, the new values are in this answer only.
    const rotated = await rotate(owner);
    expect(rotated.status).toBe(200);
    const news = rotated.body.rotated as { kind: string; key: string; fingerprint: string; bot_id: string }[];
    expect(news.map((k) => [k.bot_id, k.kind])).toEqual([
      [agent, 'secret'],
      [agent, 'identity'],
    ]);
    for (const k of news) expect(k.fingerprint).toBe(fp(k.key));
    const refused = await useSecret(keys.secret_key);
    expect([refused.status, refused.body.code]).toEqual([401, 'invalid_key']);
    expect((await useSecret(news[0].key)).status).toBe(200);
    const view = await botView(owner, agent);
    expect(view.secret_key_fingerprint).toBe(news[0].fingerprint);
    expect(view.visitor_identity_secret_fingerprint).toBe(news[1].fingerprint);
    expect(view.visitor_identity_secret_fingerprint).not.toBe(fp(identity));

    // Nothing left: the list is empty and a repeat rotates nothing (the new keys keep working).
    expect((await seen(owner)).body.seen_keys).toEqual([]);
    const again = await rotate(owner);
    expect([again.status, again.body]).toEqual([200, { rotated: [] }]);
    expect((await useSecret(news[0].key)).status).toBe(200);
  });

  it('rotates at once when the owner set the workspace so; the new values are in the removal answer', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const { person, admin, keys } = await adminWithAgent(owner, bot);
    // The setting is the owner's.
    const byAdmin = await http('/v1/dashboard/team/seen-keys/settings', {
      method: 'PUT',
      headers: admin,
      body: { rotate_keys_on_departure: true },
    });
    expect([byAdmin.status, byAdmin.body.code]).toEqual([403, 'forbidden']);
    const set = await http('/v1/dashboard/team/seen-keys/settings', {
      method: 'PUT',
      headers: owner,
      body: { rotate_keys_on_departure: true },
    });
    expect([set.status, set.body]).toEqual([200, { rotate_keys_on_departure: true }]);

    const removed = await http(`/v1/dashboard/team/members/${person.userId}`, { method: 'DELETE', headers: owner });
    expect(removed.status).toBe(200);
    expect(removed.body.keys_seen).toEqual([]);
    const news = removed.body.rotated_keys as { kind: string; key: string }[];
    expect(news.map((k) => k.kind)).toEqual(['secret', 'identity']);
    expect((await useSecret(keys.secret_key)).status).toBe(401);
    expect((await useSecret(news[0].key)).status).toBe(200);
    expect((await seen(owner)).body).toEqual({ seen_keys: [], rotate_keys_on_departure: true });
  });
});

describe('keys an admin made an operator saw', () => {
  it('are listed while they are an operator, rotated for that person only, and not listed once they are an admin again', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const first = await adminWithAgent(owner, bot);
    const second = await adminWithAgent(owner, bot);

    const demote = (userId: string, role: 'admin' | 'operator') =>
      http(`/v1/dashboard/team/members/${userId}`, { method: 'PATCH', headers: owner, body: { role } });
    const demoted = await demote(first.person.userId, 'operator');
    expect(demoted.status).toBe(200);
    expect(demoted.body).toMatchObject({ role: 'operator', revoked_builder_keys: 1, rotated_keys: [] });
    expect(
      demoted.body.keys_seen.map((k: { kind: string; seen_by: { now: string } }) => [k.kind, k.seen_by.now]),
    ).toEqual([
      ['secret', 'operator'],
      ['identity', 'operator'],
    ]);
    // An operator neither lists nor rotates.
    const operator = await sessionOf(first.person);
    expect((await seen(operator)).status).toBe(403);
    expect((await rotate(operator)).status).toBe(403);

    // Made an admin again: they may reissue keys themselves; nothing of theirs is listed.
    const promoted = await demote(first.person.userId, 'admin');
    expect(promoted.body).toMatchObject({ role: 'admin', keys_seen: [], rotated_keys: [] });
    expect((await seen(owner)).body.seen_keys).toEqual([]);

    // Both made operators: rotating for one of them leaves the other's keys as they are.
    expect((await demote(first.person.userId, 'operator')).status).toBe(200);
    expect((await demote(second.person.userId, 'operator')).status).toBe(200);
    expect((await seen(owner)).body.seen_keys).toHaveLength(4);
    // An admin rotates too (the route's roles: owners and admins).
    const third = await sessionOf(await addMember(bot, 'admin'));
    const one = await rotate(third, { user_id: first.person.userId });
    expect(one.status).toBe(200);
    expect(one.body.rotated.map((k: { bot_id: string }) => k.bot_id)).toEqual([first.agent, first.agent]);
    expect((await useSecret(first.keys.secret_key)).status).toBe(401);
    expect((await useSecret(second.keys.secret_key)).status).toBe(200);
    const left = (await seen(owner)).body.seen_keys as { seen_by: { id: string } }[];
    expect(left.map((k) => k.seen_by.id)).toEqual([second.person.userId, second.person.userId]);
  });
});
