/**
 * Names people change after sign-up: their own (everyone) and the workspace's (owners and admins), as the account
 * page does (PATCH /v1/auth/me, PATCH /v1/dashboard/workspace).
 */
import { describe, expect, it } from '@jest/globals';
import { http, newBot, ownerSession } from '../support/helpers';
import { addMember, sessionOf } from '../support/members';

describe('names after sign-up', () => {
  it('lets everyone rename themselves, owners and admins the workspace, and checks what is sent', async () => {
    const bot = await newBot();
    const owner = await ownerSession(bot);
    const operator = await sessionOf(await addMember(bot, 'operator'));
    const admin = await sessionOf(await addMember(bot, 'admin'));

    const me = await http('/v1/auth/me', { method: 'PATCH', headers: operator, body: { name: '  Bo Operator ' } });
    expect(me.status).toBe(200);
    expect(me.body.user.name).toBe('Bo Operator');
    expect((await http('/v1/auth/me', { headers: operator })).body.user.name).toBe('Bo Operator');
    // Empty removes it.
    const cleared = await http('/v1/auth/me', { method: 'PATCH', headers: operator, body: { name: '' } });
    expect(cleared.body.user.name).toBeNull();
    // Someone else's name is untouched.
    expect((await http('/v1/auth/me', { headers: owner })).body.user.name).not.toBe('Bo Operator');

    const renamed = await http('/v1/dashboard/workspace', {
      method: 'PATCH',
      headers: admin,
      body: { name: 'Acme Europe' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body.workspace.name).toBe('Acme Europe');
    expect((await http('/v1/auth/me', { headers: owner })).body.workspace.name).toBe('Acme Europe');
    const byOperator = await http('/v1/dashboard/workspace', {
      method: 'PATCH',
      headers: operator,
      body: { name: 'Mine now' },
    });
    expect(byOperator.status).toBe(403);
    for (const body of [{ name: '   ' }, {}, { name: 'x'.repeat(201) }]) {
      const bad = await http('/v1/dashboard/workspace', { method: 'PATCH', headers: owner, body });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('bad_request');
    }
    expect(
      (await http('/v1/auth/me', { method: 'PATCH', headers: owner, body: { name: 'y'.repeat(201) } })).status,
    ).toBe(400);
    expect((await http('/v1/auth/me', { headers: owner })).body.workspace.name).toBe('Acme Europe');
    expect((await http('/v1/auth/me', { method: 'PATCH', body: { name: 'Nobody' } })).status).toBe(401);
  });
});
