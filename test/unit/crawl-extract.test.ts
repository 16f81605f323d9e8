import { decodeHtml, extractPage, isHtml } from '../../lib/crawl/extract';

const BASE = 'https://example.com/docs/page.html';

function page(body: string, head = ''): string {
  return `<!doctype html><html><head><title>T</title>${head}</head><body>${body}</body></html>`;
}

/** A news-like page without semantic tags: a long article among longer chrome, as much of the web still is. */
function articlePage(): string {
  const sentence = (i: number) =>
    `Paragraph ${i} of the harbour report says the ferry timetable changes in spring, when the tides allow it, ` +
    `and the pier is repaired before the summer season begins.`;
  const related = Array.from({ length: 40 }, (_, i) => `<li><a href="/news/${i}">Related story ${i}</a></li>`);
  return page(`
    <div id="top-bar"><a href="/">Harbour News</a> <a href="/login">Log in</a></div>
    <div class="sidebar-menu"><ul>${related.join('')}</ul></div>
    <div class="post">
      <h1>Ferry timetable changes</h1>
      ${Array.from({ length: 6 }, (_, i) => `<p>${sentence(i + 1)}</p>`).join('\n')}
      <h2>Fares</h2>
      <table><tr><th>Ticket</th><th>Price</th></tr><tr><td>Adult</td><td>4 €</td></tr></table>
    </div>
    <div class="comments"><p>Comment by a reader: first!</p><a href="/c/1">Reply</a> <a href="/c/2">Report</a></div>
    <div class="site-footer-links">${related.slice(0, 20).join('')}</div>`);
}

describe('extractPage main content (Readability)', () => {
  test('an article page keeps its article, not the menus, related links and comments around it', () => {
    const { text, blocks } = extractPage(articlePage(), BASE);
    expect(text).toContain('Paragraph 1 of the harbour report');
    expect(text).toContain('Paragraph 6 of the harbour report');
    expect(text).toContain('## Fares');
    expect(text).toContain('Ticket: Adult; Price: 4 €');
    for (const chrome of ['Related story', 'Log in', 'first!', 'Report']) {
      expect({ chrome, found: text.includes(chrome) }).toEqual({ chrome, found: false });
    }
    expect(blocks.filter((b) => b.kind === 'paragraph')).toHaveLength(6);
  });
});

describe('extractPage on pages Readability refuses (short pages)', () => {
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
      'One\n\nTwo',
    );
    expect(extractPage(page(`${chrome}<p>Body text</p>`), BASE).text).toBe('Outside text\n\nBody text');
    // A main that is hidden (or empty, filled later by JavaScript) does not hide the rest of the page.
    expect(extractPage(page(`<main hidden>Hidden main</main><p>Visible</p>`), BASE).text).toBe('Visible');
    expect(extractPage(page(`<main></main><p>Fallback</p>`), BASE).text).toBe('Fallback');
  });

  test('header and footer inside an article are content, page-level ones are not', () => {
    const html = page(`<header>Site</header><article><header><h1>Post title</h1></header><p>Body</p>
      <footer>By Ann</footer></article><footer>Site footer</footer>`);
    expect(extractPage(html, BASE).text).toBe('# Post title\n\nBody\n\nBy Ann');
  });
});

describe('extractPage structure (Markdown-like text and blocks)', () => {
  test('headings, paragraphs, list items, line breaks, tables and code keep their structure', () => {
    const html = page(`<main>
      <h1>  Big   title </h1>
      <p>First <b>bold</b>   and <a href="/x">link</a>,
         wrapped.</p>
      <ul><li>One</li><li>Two <em>items</em></li></ul>
      <h3>Details</h3>
      <p>Line one<br>Line two</p>
      <div><div>Nested</div>text</div>
      <table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>
      <table><tr><td>Weight</td><td>2 kg</td></tr></table>
      <pre>code  line 1
  code line 2</pre>
      <custom-card>Custom</custom-card><span>after</span>
    </main>`);
    expect(extractPage(html, BASE).text).toBe(
      [
        '# Big title',
        'First bold and link, wrapped.',
        '- One\n- Two items',
        '### Details',
        'Line one\nLine two',
        'Nested',
        'text',
        // A run of table rows stays together, one line per row.
        'Name: a; Value: 1\nName: b; Value: 2\nWeight | 2 kg',
        '```\ncode  line 1\n  code line 2\n```',
        'Custom',
        'after',
      ].join('\n\n'),
    );
  });

  test('blocks tell headings with their level, paragraphs, list items, table rows with their header, and code', () => {
    const html = `<html><body><nav>Menu</nav><main>
      <h1>Manual</h1><p>Intro <b>text</b></p>
      <h2>Prices</h2>
      <table><thead><tr><th>Product</th><th>Price</th></tr></thead>
        <tbody><tr><td><p>Lamp</p><p>warm</p></td><td>12 €</td></tr></tbody></table>
      <ul><li>one</li><li>two</li></ul>
      <pre>a = 1</pre></main></body></html>`;
    expect(extractPage(html, BASE).blocks).toEqual([
      { kind: 'heading', level: 1, text: 'Manual' },
      { kind: 'paragraph', text: 'Intro text' },
      { kind: 'heading', level: 2, text: 'Prices' },
      { kind: 'table_row', cells: ['Lamp warm', '12 €'], header: ['Product', 'Price'] },
      { kind: 'list_item', text: 'one' },
      { kind: 'list_item', text: 'two' },
      { kind: 'code', text: 'a = 1' },
    ]);
    // A table that lays out the page (one with a table in a cell) is read as ordinary blocks.
    const layout = extractPage(
      '<table><tr><td><h2>Left</h2><p>Text</p><table><tr><td>x</td><td>y</td></tr></table></td></tr></table>',
      BASE,
    );
    expect(layout.blocks).toEqual([
      { kind: 'heading', level: 2, text: 'Left' },
      { kind: 'paragraph', text: 'Text' },
      { kind: 'table_row', cells: ['x', 'y'] },
    ]);
  });

  test('decodes entities and keeps non-Latin scripts', () => {
    const html = page(`<main><p>Tom &amp; Jerry &lt;3 caf&eacute; &#x41;&#66; &nbsp;x&copy;</p>
      <p>Секретный пароль — «северное сияние».</p><p>当社の合言葉は「桜餅」です。</p></main>`);
    expect(extractPage(html, BASE).text).toBe(
      'Tom & Jerry <3 café AB x©\n\nСекретный пароль — «северное сияние».\n\n当社の合言葉は「桜餅」です。',
    );
  });

  test('survives malformed and deeply nested markup', () => {
    expect(extractPage('<p>Unclosed <b>bold<p>Next <div>x</span>', BASE).text).toBe('Unclosed bold\n\nNext\n\nx');
    const nested = `${'<div>'.repeat(200)}deep${'</div>'.repeat(200)}<p>after</p>`;
    expect(extractPage(nested, BASE).text).toBe('deep\n\nafter');
    // Past MAX_DEPTH parsing stops, keeping what came before, instead of burning minutes of CPU.
    const bomb = `<p>before</p>${'<div>'.repeat(400_000)}deep${'</div>'.repeat(400_000)}<p>after</p>`;
    expect(extractPage(bomb, BASE).text).toBe('before');
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
    // The text keeps the row on one line, each value named by its header.
    expect(page.text.split('\n')).toContain('Product: Lamp warm; Price: 12 €');
  });

  it('keeps a table without header cells as rows of values (its first row may be data)', () => {
    const page = extractPage('<table><tr><td>Weight</td><td>2 kg</td></tr></table>', BASE);
    expect(page.blocks).toEqual([{ kind: 'table_row', cells: ['Weight', '2 kg'] }]);
  });
});
