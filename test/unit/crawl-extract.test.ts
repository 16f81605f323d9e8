import { decodeHtml, extractPage, isHtml } from '../../lib/crawl/extract';

const BASE = 'https://example.com/docs/page.html';

function page(body: string, head = ''): string {
  return `<!doctype html><html><head><title>T</title>${head}</head><body>${body}</body></html>`;
}

describe('extractPage text', () => {
  test('drops chrome, scripts, styles and hidden elements', () => {
    const { text } = extractPage(
      page(`
        <header><p>Site banner</p></header>
        <nav><a href="/a">Nav link</a></nav>
        <div role="navigation">Role nav</div>
        <div role="banner">Role banner</div>
        <aside>Sidebar</aside>
        <script>var x = "script text";</script>
        <style>.a { color: red }</style>
        <noscript>Enable JS</noscript>
        <template><p>Template text</p></template>
        <svg><text>SVG text</text><title>SVG title</title></svg>
        <iframe>Frame fallback</iframe>
        <form><label>Search form</label><input value="x"></form>
        <p hidden>Hidden attr</p>
        <p aria-hidden="true">Aria hidden</p>
        <p style="display: none">Display none</p>
        <p>Kept paragraph.</p>
        <div role="contentinfo">Role footer</div>
        <footer>Copyright</footer>`),
      BASE,
    );
    expect(text).toBe('Kept paragraph.');
  });

  test('prefers <main>, then <article>, else the body', () => {
    const chrome = '<div>Outside text</div>';
    expect(extractPage(page(`${chrome}<main><p>Main text</p></main><article>Other</article>`), BASE).text).toBe(
      'Main text',
    );
    expect(extractPage(page(`${chrome}<div role="main"><p>Role main</p></div>`), BASE).text).toBe('Role main');
    expect(extractPage(page(`${chrome}<article><p>One</p></article><article><p>Two</p></article>`), BASE).text).toBe(
      'One\nTwo',
    );
    expect(extractPage(page(`${chrome}<p>Body text</p>`), BASE).text).toBe('Outside text\nBody text');
    // A main that is hidden (or empty, filled later by JavaScript) does not hide the rest of the page.
    expect(extractPage(page(`<main hidden>Hidden main</main><p>Visible</p>`), BASE).text).toBe('Visible');
    expect(extractPage(page(`<main></main><p>Fallback</p>`), BASE).text).toBe('Fallback');
  });

  test('header and footer inside an article are content, page-level ones are not', () => {
    const html = page(`<header>Site</header><article><header><h1>Post title</h1></header><p>Body</p>
      <footer>By Ann</footer></article><footer>Site footer</footer>`);
    expect(extractPage(html, BASE).text).toBe('Post title\nBody\nBy Ann');
  });

  test('blocks, headings, list items and <br> become lines; whitespace collapses; inline stays inline', () => {
    const html = page(`<main>
      <h1>  Big   title </h1>
      <p>First <b>bold</b>   and <a href="/x">link</a>,
         wrapped.</p>
      <ul><li>One</li><li>Two <em>items</em></li></ul>
      <p>Line one<br>Line two</p>
      <div><div>Nested</div>text</div>
      <table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr></table>
      <pre>code  line 1
code line 2</pre>
      <custom-card>Custom</custom-card><span>after</span>
    </main>`);
    expect(extractPage(html, BASE).text).toBe(
      [
        'Big title',
        'First bold and link, wrapped.',
        'One',
        'Two items',
        'Line one',
        'Line two',
        'Nested',
        'text',
        'Name | Value',
        'a | 1',
        'code line 1',
        'code line 2',
        'Custom',
        'after',
      ].join('\n'),
    );
  });

  test('decodes entities and keeps non-Latin scripts', () => {
    const html = page(`<main><p>Tom &amp; Jerry &lt;3 caf&eacute; &#x41;&#66; &nbsp;x&copy;</p>
      <p>Секретный пароль — «северное сияние».</p><p>当社の合言葉は「桜餅」です。</p></main>`);
    expect(extractPage(html, BASE).text).toBe(
      'Tom & Jerry <3 café AB x©\nСекретный пароль — «северное сияние».\n当社の合言葉は「桜餅」です。',
    );
  });

  test('survives malformed and deeply nested markup', () => {
    expect(extractPage('<p>Unclosed <b>bold<p>Next <div>x</span>', BASE).text).toBe('Unclosed bold\nNext\nx');
    const nested = `${'<div>'.repeat(300)}deep${'</div>'.repeat(300)}<p>after</p>`;
    expect(extractPage(nested, BASE).text).toBe('deep\nafter');
    // Past MAX_DEPTH parsing stops (keeping what came before) instead of burning minutes of CPU.
    const bomb = `<p>before</p>${'<div>'.repeat(400_000)}deep${'</div>'.repeat(400_000)}<p>after</p>`;
    const started = Date.now();
    expect(extractPage(bomb, BASE).text).toBe('before');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(extractPage('', BASE)).toEqual({ title: '', text: '', blocks: [], links: [] });
  });
});

describe('extractPage title', () => {
  test('uses <title>, else the first <h1>', () => {
    expect(extractPage('<title> Hello &amp;\n World </title><h1>H</h1>', BASE).title).toBe('Hello & World');
    expect(extractPage('<body><h1>First <i>heading</i></h1><h1>Second</h1>', BASE).title).toBe('First heading');
    expect(extractPage('<svg><title>Icon</title></svg><h1>Real</h1>', BASE).title).toBe('Real');
    expect(extractPage('<p>none</p>', BASE).title).toBe('');
  });
});

describe('extractPage links', () => {
  test('resolves against the page URL, drops fragments, skips nofollow and non-http schemes, deduplicates', () => {
    const { links } = extractPage(
      page(`<nav><a href="/nav">Nav links count</a></nav><main>
        <a href="sibling.html#part">rel</a>
        <a href="../up">up</a>
        <a href="?q=1">query</a>
        <a href="//cdn.example.net/x">protocol-relative</a>
        <a href="https://other.org/y#z">abs</a>
        <a href="/nav#again">dup</a>
        <a href="/skip" rel="external NoFollow">nofollow</a>
        <a href="mailto:a@b.c">mail</a><a href="javascript:alert(1)">js</a><a href="ftp://x/y">ftp</a>
        <a href="tel:123">tel</a><a>no href</a><a href="http://[bad">bad</a>
        <a href="  /spaced  ">spaced</a>
      </main>`),
      BASE,
    );
    expect(links).toEqual([
      'https://example.com/nav',
      'https://example.com/docs/sibling.html',
      'https://example.com/up',
      'https://example.com/docs/page.html?q=1',
      'https://cdn.example.net/x',
      'https://other.org/y',
      'https://example.com/spaced',
    ]);
  });

  test('honours the first <base href>', () => {
    const html = page('<a href="a">a</a>', '<base target="_top"><base href="https://static.example.com/root/">');
    expect(extractPage(html, BASE).links).toEqual(['https://static.example.com/root/a']);
    const relative = page('<a href="a">a</a>', '<base href="/other/">');
    expect(extractPage(relative, BASE).links).toEqual(['https://example.com/other/a']);
    const broken = page('<a href="a">a</a>', '<base href="javascript:x">');
    expect(extractPage(broken, BASE).links).toEqual(['https://example.com/docs/a']);
  });
});

describe('decodeHtml and isHtml', () => {
  const cp1251 = Buffer.from([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]); // "Привет"

  test('charset from BOM, then Content-Type, then <meta>, else UTF-8', () => {
    expect(decodeHtml(cp1251, 'text/html; charset=windows-1251')).toBe('Привет');
    expect(decodeHtml(cp1251, 'text/html; charset="Windows-1251"')).toBe('Привет');
    const withMeta = Buffer.concat([Buffer.from('<meta charset="windows-1251"><p>'), cp1251]);
    expect(decodeHtml(withMeta, 'text/html')).toBe('<meta charset="windows-1251"><p>Привет');
    const httpEquiv = Buffer.concat([
      Buffer.from('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'),
      Buffer.from([0xf0, 0xd2, 0xc9]),
    ]);
    expect(decodeHtml(httpEquiv).endsWith('При')).toBe(true);
    expect(decodeHtml(Buffer.from('\uFEFFhé', 'utf8'), 'text/html; charset=windows-1251')).toBe('hé');
    expect(decodeHtml(Buffer.from('日本', 'utf8'), 'text/html; charset=bogus-charset')).toBe('日本');
  });

  test('HTML by content type, sniffed only when there is none', () => {
    expect(isHtml('text/html; charset=utf-8', Buffer.from(''))).toBe(true);
    expect(isHtml('application/xhtml+xml', Buffer.from(''))).toBe(true);
    expect(isHtml('application/pdf', Buffer.from('<html>'))).toBe(false);
    expect(isHtml('text/plain', Buffer.from('<html>'))).toBe(false);
    expect(isHtml(undefined, Buffer.from('  <!DOCTYPE html><p>'))).toBe(true);
    expect(isHtml(undefined, Buffer.from('%PDF-1.4'))).toBe(false);
  });
});

describe('extractPage blocks (the structure the splitter reads)', () => {
  it('tells headings with their level, paragraphs, list items, table rows with their header, and code', () => {
    const html = `<html><body><nav>Menu</nav><main>
      <h1>Manual</h1><p>Intro <b>text</b></p>
      <h2>Prices</h2>
      <table><thead><tr><th>Product</th><th>Price</th></tr></thead>
        <tbody><tr><td><p>Lamp</p><p>warm</p></td><td>12 €</td></tr></tbody></table>
      <ul><li>one</li><li>two</li></ul>
      <pre>a = 1</pre></main></body></html>`;
    const page = extractPage(html, BASE);
    expect(page.blocks).toEqual([
      { kind: 'heading', level: 1, text: 'Manual' },
      { kind: 'paragraph', text: 'Intro text' },
      { kind: 'heading', level: 2, text: 'Prices' },
      { kind: 'table_row', cells: ['Lamp warm', '12 €'], header: ['Product', 'Price'] },
      { kind: 'list_item', text: 'one' },
      { kind: 'list_item', text: 'two' },
      { kind: 'code', text: 'a = 1' },
    ]);
    // The text keeps its lines as before: the row on one line, cells apart.
    expect(page.text.split('\n')).toContain('Lamp warm | 12 €');
  });

  it('keeps a table without header cells as rows of values (its first row may be data)', () => {
    const page = extractPage('<table><tr><td>Weight</td><td>2 kg</td></tr></table>', BASE);
    expect(page.blocks).toEqual([{ kind: 'table_row', cells: ['Weight', '2 kg'] }]);
  });
});
