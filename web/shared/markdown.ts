/**
 * The Markdown a model writes, read into a small tree the front ends draw with their own elements: paragraphs, line
 * breaks, lists, headings (drawn as bold lines), code blocks, and inline bold, italic, code and links. Never HTML:
 * every character of the text ends up as text, and a link is only an `http(s):` or `mailto:` address, drawn with the
 * host it goes to unless its text is that address (`linkTo`). Anything that is not one of these forms (an unclosed
 * `**`, a table) stays as the characters it is, which is also what a stream shows until the closing mark arrives.
 * No DOM and no framework here, so it is tested as plain code.
 */

export type Inline =
  | { type: 'text'; text: string }
  | { type: 'code'; text: string }
  | { type: 'strong'; children: Inline[] }
  | { type: 'em'; children: Inline[] }
  /** `host`: where the link goes, when its text does not say it (see `linkTo`); drawn after the text. */
  | { type: 'link'; href: string; children: Inline[]; host?: string }
  | { type: 'br' };

export type Block =
  | { type: 'paragraph'; children: Inline[] }
  | { type: 'heading'; children: Inline[] }
  | { type: 'list'; ordered: boolean; start: number; items: Inline[][] }
  | { type: 'code'; text: string };

const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBERED = /^\s{0,3}(\d{1,9})[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s{0,3}(```|~~~)/;

/** Reads the blocks of `text`, line by line. */
export function parseMarkdown(text: string): Block[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const blocks: Block[] = [];
  let paragraph: string[] = [];
  let list: { ordered: boolean; start: number; items: string[][] } | undefined;

  const endParagraph = () => {
    if (paragraph.length) blocks.push({ type: 'paragraph', children: parseInlineLines(paragraph) });
    paragraph = [];
  };
  const endList = () => {
    if (list)
      blocks.push({
        type: 'list',
        ordered: list.ordered,
        start: list.start,
        items: list.items.map((lines) => parseInlineLines(lines)),
      });
    list = undefined;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      endParagraph();
      endList();
      const body: string[] = [];
      let j = i + 1;
      while (j < lines.length && !lines[j].trimStart().startsWith(fence[1])) body.push(lines[j++]);
      if (j === lines.length) {
        // Not closed (yet: a stream may still bring it): the fence line is text like any other.
        paragraph.push(line);
        continue;
      }
      blocks.push({ type: 'code', text: body.join('\n') });
      i = j;
      continue;
    }
    if (line.trim() === '') {
      endParagraph();
      endList();
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      endParagraph();
      endList();
      blocks.push({ type: 'heading', children: parseInline(heading[1]) });
      continue;
    }
    const bullet = BULLET.exec(line);
    const numbered = bullet ? null : NUMBERED.exec(line);
    if (bullet || numbered) {
      endParagraph();
      const ordered = Boolean(numbered);
      if (list && list.ordered !== ordered) endList();
      list ??= { ordered, start: numbered ? Number(numbered[1]) : 1, items: [] };
      list.items.push([bullet ? bullet[1] : numbered![2]]);
      continue;
    }
    // An indented line under a list item continues it; any other line ends the list and is text.
    if (list && /^\s+\S/.test(line)) {
      list.items[list.items.length - 1].push(line.trim());
      continue;
    }
    endList();
    paragraph.push(line);
  }
  endParagraph();
  endList();
  return blocks;
}

function parseInlineLines(lines: string[]): Inline[] {
  const out: Inline[] = [];
  lines.forEach((line, i) => {
    if (i > 0) out.push({ type: 'br' });
    out.push(...parseInline(line));
  });
  return out;
}

/** A safe link target: web and mail addresses only (never `javascript:`, `data:` or a relative path). */
export function safeHref(href: string): string | undefined {
  return /^(https?:\/\/[^\s<>"]+|mailto:[^\s<>"]+@[^\s<>"]+)$/i.test(href) ? href : undefined;
}

/**
 * A link to `href` (a `safeHref`) drawn as `children`, with the host it really goes to unless its text is that very
 * address: a text can name another host (`[bank.example.com](https://evil.example)`) or none (`[your account](…)`),
 * and a reader on a phone has no status bar to check. An address with a user part (`https://bank.example@evil.example`)
 * or a host written in another script (shown as its `xn--` form) never counts as saying where it goes.
 * Undefined when the address cannot be read: it stays text.
 */
function linkTo(href: string, children: Inline[]): Inline | undefined {
  const goes = destination(href);
  if (!goes) return undefined;
  return saysWhere(plainText(children), goes)
    ? { type: 'link', href, children }
    : { type: 'link', href, children, host: goes.host };
}

/** The host of a web address (or the address of a `mailto:`), and whether the address hides it behind a user part. */
function destination(href: string): { host: string; mail: boolean; userPart: boolean } | undefined {
  if (/^mailto:/i.test(href)) {
    const address = href.slice('mailto:'.length).split('?')[0].toLowerCase();
    return address ? { host: address, mail: true, userPart: false } : undefined;
  }
  try {
    const url = new URL(href);
    if (!url.hostname) return undefined;
    return { host: url.hostname, mail: false, userPart: url.username !== '' || url.password !== '' };
  } catch {
    return undefined;
  }
}

/** The text is the address itself (or its host, as written): it tells the reader where the link goes. */
function saysWhere(text: string, goes: { host: string; mail: boolean; userPart: boolean }): boolean {
  if (goes.userPart) return false;
  const said = text.trim().toLowerCase();
  if (goes.mail) return said.replace(/^mailto:/, '') === goes.host;
  const named = /^(?:https?:\/\/)?([^\s/?#@:\\]+)(?::\d+)?(?:[/?#]\S*)?$/.exec(said);
  return named !== null && named[1].replace(/\.$/, '') === goes.host.replace(/\.$/, '');
}

function plainText(nodes: Inline[]): string {
  return nodes
    .map((n) =>
      n.type === 'text' || n.type === 'code'
        ? n.text
        : n.type === 'br'
          ? ' '
          : 'children' in n
            ? plainText(n.children)
            : '',
    )
    .join('');
}

/** A bare web address in running text, without the sentence's punctuation after it. */
const BARE_URL = /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]/;

/** Text as it was typed (not Markdown): only its bare addresses become links. */
export function linkify(text: string): Inline[] {
  const out: Inline[] = [];
  const pattern = new RegExp(BARE_URL.source, 'g');
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    const at = match.index ?? 0;
    const link = linkTo(match[0], [{ type: 'text', text: match[0] }]);
    if (!link) continue;
    if (at > last) out.push({ type: 'text', text: text.slice(last, at) });
    out.push(link);
    last = at + match[0].length;
  }
  if (last < text.length) out.push({ type: 'text', text: text.slice(last) });
  return out;
}

// The inline forms, tried at each position; the earliest match wins, the first listed on a tie.
const INLINE: { re: RegExp; make: (m: RegExpExecArray) => Inline | undefined }[] = [
  { re: /`([^`\n]+)`/y, make: (m) => ({ type: 'code', text: m[1] }) },
  {
    re: /\[([^\]\n]+)\]\(([^)\s]+)\)/y,
    make: (m) => {
      const href = safeHref(m[2]);
      return href ? linkTo(href, parseInline(m[1])) : undefined;
    },
  },
  {
    re: /\bhttps?:\/\/[^\s<>"'`]+[^\s<>"'`.,;:!?)\]]/y,
    make: (m) => linkTo(m[0], [{ type: 'text', text: m[0] }]),
  },
  { re: /\*\*(?=\S)([^\n]*?\S)\*\*/y, make: (m) => ({ type: 'strong', children: parseInline(m[1]) }) },
  { re: /\b__(?=\S)([^\n]*?\S)__\b/y, make: (m) => ({ type: 'strong', children: parseInline(m[1]) }) },
  { re: /\*(?=[^\s*])([^\n*]*?[^\s*])\*/y, make: (m) => ({ type: 'em', children: parseInline(m[1]) }) },
  // `_` only around whole words, so snake_case names stay as they are.
  { re: /\b_(?=[^\s_])([^\n_]*?[^\s_])_\b/y, make: (m) => ({ type: 'em', children: parseInline(m[1]) }) },
];

/** Reads the inline forms of one line. */
export function parseInline(text: string): Inline[] {
  const out: Inline[] = [];
  let plain = '';
  let i = 0;
  outer: while (i < text.length) {
    for (const form of INLINE) {
      form.re.lastIndex = i;
      const m = form.re.exec(text);
      if (!m) continue;
      const node = form.make(m);
      if (!node) continue;
      if (plain) out.push({ type: 'text', text: plain });
      plain = '';
      out.push(node);
      i += m[0].length;
      continue outer;
    }
    plain += text[i];
    i++;
  }
  if (plain) out.push({ type: 'text', text: plain });
  return out;
}
