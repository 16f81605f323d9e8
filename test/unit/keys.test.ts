import { describe, expect, it } from '@jest/globals';
import { constantTimeEqual, fingerprint, generateKey, hashKey, keyKindOf, randomToken } from '../../lib/keys';
import { createSecretBox } from '../../lib/secret-box';

describe('keys', () => {
  it('are prefixed by kind and random', () => {
    const a = generateKey('secret');
    const b = generateKey('secret');
    expect(a).toMatch(/^sk_[A-Za-z0-9]{32}$/);
    expect(a).not.toBe(b);
    expect(generateKey('webhook')).toMatch(/^whsec_/);
    expect(keyKindOf(generateKey('identity'))).toBe('identity');
    expect(keyKindOf('whsec_abc')).toBe('webhook');
  });

  it('are stored as a SHA-256 hash and shown afterwards only as a fingerprint', () => {
    const key = generateKey('secret');
    expect(hashKey(key)).toHaveLength(32);
    expect(hashKey(key).equals(hashKey(key))).toBe(true);
    expect(fingerprint(key)).toBe(`sk_…${key.slice(-4)}`);
  });

  it('compare in constant time, including different lengths', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
  });

  it('randomToken draws from base62 without bias towards early letters', () => {
    const counts = new Map<string, number>();
    for (const ch of randomToken(62_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(700);
  });
});

describe('secret box', () => {
  const box = createSecretBox('11'.repeat(32));

  it('seals and opens a signing secret', () => {
    const sealed = box.seal('whsec_example');
    expect(sealed).not.toContain('whsec_example');
    expect(box.open(sealed)).toBe('whsec_example');
    expect(box.seal('whsec_example')).not.toBe(sealed); // random IV
  });

  it('refuses a tampered or foreign value', () => {
    const sealed = box.seal('idsec_example');
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open(parts.join('.'))).toThrow();
    expect(() => createSecretBox('22'.repeat(32)).open(sealed)).toThrow();
  });
});
