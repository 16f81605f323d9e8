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
          { type: 'link', href: 'https://shop.example.com/hours', children: [text('opening hours')] },
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
