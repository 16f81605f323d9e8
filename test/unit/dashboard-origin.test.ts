import { describe, expect, it, jest } from '@jest/globals';
// The dashboard's sources are an ES module package: the type from there, the code through Jest.
import type * as Origin from '../../web/dashboard/src/origin.js' with { 'resolution-mode': 'import' };

const { readOrigin } = jest.requireActual<typeof Origin>('../../web/dashboard/src/origin');

describe('a site the widget may run on, as the owner pastes it (web/dashboard/src/origin.ts)', () => {
  it('keeps a page address as its site, and says it was trimmed', () => {
    expect(readOrigin(' https://Shop.Example.com/checkout?step=2#pay ')).toEqual({
      ok: true,
      origin: 'https://shop.example.com',
      trimmed: true,
    });
    expect(readOrigin('http://localhost:3000/')).toEqual({ ok: true, origin: 'http://localhost:3000', trimmed: false });
    expect(readOrigin('https://shop.example.com:8443')).toEqual({
      ok: true,
      origin: 'https://shop.example.com:8443',
      trimmed: false,
    });
  });

  it('takes a bare host name as an https site', () => {
    expect(readOrigin('shop.example.com/faq')).toEqual({ ok: true, origin: 'https://shop.example.com', trimmed: true });
  });

  it('refuses what is no web site, saying why', () => {
    for (const [typed, said] of [
      ['', /address of a site/],
      ['ftp://files.example.com', /web pages/],
      ['https://user:pw@shop.example.com', /user name and password/],
      ['shop', /not a site’s address/],
      ['https://', /not a web address/],
    ] as const) {
      const read = readOrigin(typed);
      expect([typed, read.ok]).toEqual([typed, false]);
      if (!read.ok) expect(read.problem).toMatch(said);
    }
  });
});
