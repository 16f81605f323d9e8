import { describe, expect, it, jest } from '@jest/globals';
// The widget's sources are an ES module package (web/widget/package.json); this CommonJS test takes the type from
// there and loads the code through Jest, which compiles it like any other TypeScript file.
import type * as PageContext from '../../web/widget/src/page-context.js' with { 'resolution-mode': 'import' };

const { pageContextOf } = jest.requireActual<typeof PageContext>('../../web/widget/src/page-context');

describe("the widget's page context (ChatRequest page_context)", () => {
  it('is the title and the address without query string or fragment (they can hold tokens)', () => {
    const url = new URL('https://shop.example.com/account/orders?session=abc123&reset_token=secret#token=also-secret');
    const context = pageContextOf('Your orders', url);
    expect(context).toBe('Page: Your orders\nAddress: https://shop.example.com/account/orders');
    expect(context).not.toMatch(/secret|abc123|\?|#/);
  });

  it('drops a fragment alone, keeps a port, and stays within 1000 characters', () => {
    expect(pageContextOf('Reset', new URL('http://localhost:8080/reset#access_token=eyJ'))).toBe(
      'Page: Reset\nAddress: http://localhost:8080/reset',
    );
    expect(pageContextOf('x'.repeat(5000), new URL('https://shop.example.com/'))).toHaveLength(1000);
  });
});
