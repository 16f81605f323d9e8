import { describe, expect, it } from '@jest/globals';
import { pageContextOf } from '../../web/widget/src/page-context';

describe("the widget's page context", () => {
  it('is the title and the address without query string or fragment (they can hold tokens)', () => {
    const url = new URL('https://shop.example.com/account/orders?session=abc123&reset_token=secret#token=also-secret');
    const context = pageContextOf('Your orders', url);
    expect(context).toBe('Page: Your orders\nAddress: https://shop.example.com/account/orders');
    expect(context).not.toMatch(/secret|abc123|\?|#/);
  });

  it('stays within 1000 characters', () => {
    expect(pageContextOf('x'.repeat(5000), new URL('https://shop.example.com/'))).toHaveLength(1000);
  });
});
