import { describe, expect, it } from '@jest/globals';
import { type Block, type Inline, linkify, parseInline, parseMarkdown, safeHref } from '../../web/shared/markdown';

const text = (t: string): Inline => ({ type: 'text', text: t });

/** Every character of the input, as the reader sees it: what a tree draws as text. */
function visible(blocks: Block[]): string {
  const inl = (ns: Inline[]): string =>
    ns
      .map((n) => (n.type === 'text' || n.type === 'code' ? n.text : n.type === 'br' ? '\n' : inl(n.children)))
      .join('');
  return blocks
    .map((b) => (b.type === 'code' ? b.text : b.type === 'list' ? b.items.map(inl).join('\n') : inl(b.children)))
    .join('\n');
}

describe('the Markdown of an answer (web/shared/markdown.ts)', () => {
  it("reads a model's typical answer: paragraphs, a list, bold, a link", () => {
    const blocks = parseMarkdown(
      'We are open **Monday to Friday**.\nSee below:\n\n- 9:00 to 18:00\n- closed on *holidays*\n\nDetails: [opening hours](https://shop.example.com/hours).',
    );
    expect(blocks).toEqual([
      {
        type: 'paragraph',
        children: [
          text('We are open '),
          { type: 'strong', children: [text('Monday to Friday')] },
          text('.'),
          { type: 'br' },
          text('See below:'),
        ],
      },
      {
        type: 'list',
        ordered: false,
        start: 1,
        items: [[text('9:00 to 18:00')], [text('closed on '), { type: 'em', children: [text('holidays')] }]],
      },
      {
        type: 'paragraph',
        children: [
          text('Details: '),
          {
            type: 'link',
            href: 'https://shop.example.com/hours',
            children: [text('opening hours')],
            host: 'shop.example.com',
          },
          text('.'),
        ],
      },
    ]);
  });

  it('reads numbered lists from their number, headings, code spans and fenced code as code', () => {
    expect(
      parseMarkdown('## Steps\n3. open the app\n4) sign in\n   with your e-mail\n```\nnpm start **not bold**\n```'),
    ).toEqual([
      { type: 'heading', children: [text('Steps')] },
      {
        type: 'list',
        ordered: true,
        start: 3,
        items: [[text('open the app')], [text('sign in'), { type: 'br' }, text('with your e-mail')]],
      },
      { type: 'code', text: 'npm start **not bold**' },
    ]);
    expect(parseInline('run `a **b**` now')).toEqual([text('run '), { type: 'code', text: 'a **b**' }, text(' now')]);
  });

  it('never makes HTML or an unsafe link: tags stay text, javascript: and data: links stay text', () => {
    const input = '<img src=x onerror=alert(1)> [click](javascript:alert(1)) [x](data:text/html,hi) [rel](/admin)';
    const blocks = parseMarkdown(input);
    expect(visible(blocks)).toBe(input);
    expect(JSON.stringify(blocks)).not.toContain('"link"');
    expect(safeHref('mailto:help@shop.example.com')).toBe('mailto:help@shop.example.com');
    expect(safeHref('HTTPS://shop.example.com/a?b=1')).toBe('HTTPS://shop.example.com/a?b=1');
    expect(safeHref('javascript:alert(1)')).toBeUndefined();
    expect(safeHref('//evil.example')).toBeUndefined();
  });

  it('shows where a link really goes unless its text is that address: another host named, or none', () => {
    const hostOf = (md: string) => {
      const [node] = parseInline(md);
      return node.type === 'link' ? (node.host ?? null) : 'not a link';
    };
    // Text naming another host than the link's: the real host is shown.
    expect(hostOf('[bank.example.com](https://evil.example/login)')).toBe('evil.example');
    expect(hostOf('[https://bank.example.com/login](https://evil.example/login)')).toBe('evil.example');
    expect(hostOf('[bank.example.com.evil.example](https://evil.example)')).toBe('evil.example');
    expect(hostOf('[**bank.example.com**](https://evil.example)')).toBe('evil.example');
    expect(hostOf('[help@bank.example.com](mailto:help@evil.example)')).toBe('help@evil.example');
    // Text naming no host hides it as well.
    expect(hostOf('[your account](https://evil.example/login)')).toBe('evil.example');
    // Text that is the address, or its host, says where it goes.
    expect(hostOf('[shop.example.com](https://shop.example.com/hours)')).toBeNull();
    expect(hostOf('[Shop.Example.com/hours](https://shop.example.com/hours)')).toBeNull();
    expect(hostOf('[https://shop.example.com/hours](https://shop.example.com/hours)')).toBeNull();
    expect(hostOf('https://shop.example.com/hours')).toBeNull();
    expect(hostOf('[help@shop.example.com](mailto:help@shop.example.com)')).toBeNull();
    // An address that hides its host: a user part before it, or a host in another script (its xn-- form is shown).
    expect(hostOf('https://bank.example.com@evil.example/login')).toBe('evil.example');
    expect(hostOf('[bаnk.example](https://bаnk.example/)')).toMatch(/^xn--/);
    expect(linkify('see https://bank.example.com@evil.example/x')).toEqual([
      text('see '),
      {
        type: 'link',
        href: 'https://bank.example.com@evil.example/x',
        children: [text('https://bank.example.com@evil.example/x')],
        host: 'evil.example',
      },
    ]);
    // The host is drawn beside the text, never instead of it: every character of the answer is still shown.
    expect(visible(parseMarkdown('[bank.example.com](https://evil.example)'))).toBe('bank.example.com');
  });

  it('makes bare addresses links without the sentence punctuation after them', () => {
    expect(parseInline('Go to https://shop.example.com/faq, or (https://shop.example.com/help).')).toEqual([
      text('Go to '),
      { type: 'link', href: 'https://shop.example.com/faq', children: [text('https://shop.example.com/faq')] },
      text(', or ('),
      { type: 'link', href: 'https://shop.example.com/help', children: [text('https://shop.example.com/help')] },
      text(').'),
    ]);
  });

  it('leaves what is not Markdown as it is: snake_case, a lone star, 2 * 3 * 4, an unclosed mark mid-stream', () => {
    for (const s of [
      'order_id and user_name',
      'a * b',
      '2 * 3 * 4 = 24',
      'we open at **nine',
      '**',
      '```js\nconst a = 1;',
    ]) {
      expect([s, visible(parseMarkdown(s))]).toEqual([s, s]);
    }
  });

  it('drops only the marks: every other character of the text is shown', () => {
    expect(visible(parseMarkdown('**a** _b_ `c` [d](https://e.example) *f*'))).toBe('a b c d f');
    expect(visible(parseMarkdown('1. one\n2. two\n\n- three'))).toBe('one\ntwo\nthree');
  });

  it("reads a visitor's typed text for addresses only", () => {
    expect(linkify('my **order** is at https://shop.example.com/o/17.')).toEqual([
      text('my **order** is at '),
      { type: 'link', href: 'https://shop.example.com/o/17', children: [text('https://shop.example.com/o/17')] },
      text('.'),
    ]);
  });
});
