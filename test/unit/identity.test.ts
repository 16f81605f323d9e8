import { describe, expect, it } from '@jest/globals';
import { signVisitorConfirmation, verifyVisitorConfirmation } from '../../lib/identity';

const secret = 'idsec_test_secret';
const now = 1_800_000_000;
const opts = { botId: 'bot_a', secret, nowSeconds: now };
const sign = (claims: Record<string, unknown>, s = secret) => signVisitorConfirmation(claims, s);

describe('visitor identity confirmation', () => {
  it('accepts a valid confirmation and reports the role', () => {
    expect(verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a', exp: now + 60 }), opts)).toEqual({
      user: 'u1',
      role: 'admin',
    });
    expect(verifyVisitorConfirmation(sign({ user: 'u1', role: 'editor', bot: 'bot_a', exp: now + 60 }), opts)).toEqual({
      user: 'u1',
      role: 'visitor',
    });
  });

  it('rule 1: exp is required, not past, and at most 24 hours ahead', () => {
    expect(verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a' }), opts)).toBeNull();
    expect(verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a', exp: now - 1 }), opts)).toBeNull();
    expect(
      verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a', exp: now + 24 * 3600 }), opts),
    ).not.toBeNull();
    expect(
      verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a', exp: now + 24 * 3600 + 1 }), opts),
    ).toBeNull();
    expect(
      verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a', exp: String(now + 60) }), opts),
    ).toBeNull();
  });

  it('rule 2: a confirmation for another bot does not work', () => {
    expect(
      verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_b', exp: now + 60 }), opts),
    ).toBeNull();
  });

  it('rule 5: another secret (a rotated one) invalidates it', () => {
    expect(
      verifyVisitorConfirmation(sign({ user: 'u1', role: 'admin', bot: 'bot_a', exp: now + 60 }, 'idsec_old'), opts),
    ).toBeNull();
  });

  it.each([
    ['empty', ''],
    ['two parts', 'v1.abc'],
    ['wrong version', sign({ user: 'u', bot: 'bot_a', exp: now + 60 }).replace(/^v1/, 'v2')],
    [
      'padded data',
      (() => {
        const t = sign({ user: 'u', bot: 'bot_a', exp: now + 60 }).split('.');
        return `v1.${t[1]}=.${t[2]}`;
      })(),
    ],
    ['not JSON', `v1.${Buffer.from('nope').toString('base64url')}.${'0'.repeat(64)}`],
    [
      'tampered data',
      (() => {
        const t = sign({ user: 'u', role: 'visitor', bot: 'bot_a', exp: now + 60 }).split('.');
        return `v1.${Buffer.from(JSON.stringify({ user: 'u', role: 'admin', bot: 'bot_a', exp: now + 60 })).toString('base64url')}.${t[2]}`;
      })(),
    ],
  ])('rule 3: %s is simply not accepted (no throw)', (_l, token) => {
    expect(verifyVisitorConfirmation(token, opts)).toBeNull();
  });
});
