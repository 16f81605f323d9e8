import { describe, expect, it } from '@jest/globals';
import { createDb } from '../../lib/db';
import { agentctl, http } from '../support/helpers';
import { stackInfo } from '../support/stack-info';

const env = () => ({ DATABASE_URL: stackInfo().databaseUrl, SECRET_ENCRYPTION_KEY: stackInfo().secretEncryptionKey });

describe('agentctl', () => {
  it('--help describes every command', async () => {
    const res = await agentctl(['--help']);
    expect(res.code).toBe(0);
    for (const cmd of ['bootstrap', 'keys rotate', 'credits grant', 'migrate']) expect(res.stdout).toContain(cmd);
  });

  it('bootstrap --json prints the bot id and every key once, and the secret key works', async () => {
    const res = await agentctl(['bootstrap', '--json'], env());
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout);
    expect(out.bot_id).toMatch(/^bot_/);
    expect(out.keys).toEqual({
      secret_key: expect.stringMatching(/^sk_[A-Za-z0-9]{32}$/),
      public_key: expect.stringMatching(/^pk_/),
      builder_key: expect.stringMatching(/^ck_/),
      handoff_webhook_secret: expect.stringMatching(/^whsec_/),
      visitor_identity_secret: expect.stringMatching(/^idsec_/),
    });
    expect(out.password.length).toBeGreaterThanOrEqual(16);
    const ok = await http('/v1/api/messages?session_id=cli', { key: out.keys.secret_key });
    expect(ok.status).toBe(200);
  });

  it('keys rotate --kind secret revokes the previous secret key at once', async () => {
    const boot = JSON.parse((await agentctl(['bootstrap', '--json'], env())).stdout);
    const rotated = await agentctl(['keys', 'rotate', '--bot', boot.bot_id, '--kind', 'secret', '--json'], env());
    expect(rotated.code).toBe(0);
    const { key } = JSON.parse(rotated.stdout);
    expect(key).toMatch(/^sk_/);
    expect((await http('/v1/api/messages?session_id=r', { key: boot.keys.secret_key })).body.code).toBe('invalid_key');
    expect((await http('/v1/api/messages?session_id=r', { key })).status).toBe(200);
  });

  it('the stored keys are hashes: no key appears in the database', async () => {
    const boot = JSON.parse((await agentctl(['bootstrap', '--json'], env())).stdout);
    const db = createDb(stackInfo().databaseUrl, { max: 1 });
    try {
      const dump = await db.query(
        `SELECT row_to_json(k)::text AS row FROM api_keys k WHERE bot_id = $1
         UNION ALL SELECT row_to_json(b)::text FROM bots b WHERE id = $1`,
        [boot.bot_id],
      );
      const text = dump.rows.map((r: { row: string }) => r.row).join('\n');
      for (const secret of [
        boot.keys.secret_key,
        boot.keys.builder_key,
        boot.keys.handoff_webhook_secret,
        boot.keys.visitor_identity_secret,
      ]) {
        expect(text).not.toContain(secret);
      }
    } finally {
      await db.end();
    }
  });

  it('keys rotate with a bad kind or unknown bot fails with a clear message', async () => {
    const bad = await agentctl(['keys', 'rotate', '--bot', 'bot_x', '--kind', 'nope'], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--kind must be one of');
    const unknown = await agentctl(['keys', 'rotate', '--bot', 'bot_missing', '--kind', 'secret'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No bot with id bot_missing');
  });

  it('credits grant adds to the workspace balance through the ledger', async () => {
    const boot = JSON.parse((await agentctl(['bootstrap', '--json'], env())).stdout);
    const res = await agentctl(
      ['credits', 'grant', '--workspace', boot.workspace_id, '--amount', '250', '--json'],
      env(),
    );
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual({ workspace_id: boot.workspace_id, granted: 250, balance: 1250 });
    const bad = await agentctl(['credits', 'grant', '--workspace', boot.workspace_id, '--amount', '-5'], env());
    expect(bad.code).toBe(2);
    const unknown = await agentctl(['credits', 'grant', '--workspace', 'ws_nope', '--amount', '5'], env());
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No workspace with id ws_nope');
  });

  it('names the missing variable when it cannot reach a database', async () => {
    const res = await agentctl(['bootstrap']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('DATABASE_URL');
  });
});
