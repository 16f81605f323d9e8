import MarkdownIt from 'markdown-it';
import type { Block, DocumentModel } from '../document';

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

// CommonMark plus GFM tables and strikethrough; raw HTML is read as text, never rendered.
const md = new MarkdownIt({ html: false, linkify: false });

/** An inline token's plain text: words, code spans, image alt texts; soft breaks become spaces. */
function inlineText(token: Token): string {
  let out = '';
  for (const child of token.children ?? []) {
    if (child.type === 'text' || child.type === 'code_inline' || child.type === 'html_inline') out += child.content;
    else if (child.type === 'softbreak' || child.type === 'hardbreak') out += ' ';
    else if (child.type === 'image') out += child.content;
  }
  return out.replace(/\s+/g, ' ').trim();
}

/**
 * Markdown with markdown-it's token stream: `#` and underlined headings, paragraphs, list items (each item one
 * block, nested items their own), GFM tables (rows with their header), fenced and indented code, block quotes.
 */
export function readMarkdown(text: string): DocumentModel {
  const tokens = md.parse(text, {});
  const blocks: Block[] = [];
  let title: string | undefined;
  // Open list items: text of their paragraphs gathers here until the item's first nested block or its end.
  const items: { parts: string[] }[] = [];
  let header: string[] | undefined;
  let row: string[] | undefined;
  let inHead = false;

  const flushItem = () => {
    const item = items[items.length - 1];
    if (item && item.parts.length) blocks.push({ kind: 'list_item', text: item.parts.join(' ') });
    if (item) item.parts = [];
  };

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    switch (t.type) {
      case 'heading_open': {
        const content = inlineText(tokens[i + 1]);
        const level = Number(t.tag.slice(1));
        if (content) {
          blocks.push({ kind: 'heading', level, text: content });
          if (level === 1 && title === undefined) title = content;
        }
        i += 2;
        break;
      }
      case 'list_item_open':
        flushItem();
        items.push({ parts: [] });
        break;
      case 'list_item_close':
        flushItem();
        items.pop();
        break;
      case 'bullet_list_open':
      case 'ordered_list_open':
        // A nested list: the parent item's own text comes first.
        flushItem();
        break;
      case 'inline': {
        const content = inlineText(t);
        if (!content) break;
        if (row) row.push(content);
        else if (items.length) items[items.length - 1].parts.push(content);
        else blocks.push({ kind: 'paragraph', text: content });
        break;
      }
      case 'thead_open':
        inHead = true;
        break;
      case 'thead_close':
        inHead = false;
        break;
      case 'table_open':
        header = undefined;
        break;
      case 'tr_open':
        row = [];
        break;
      case 'th_close':
      case 'td_close':
        // An empty cell has no inline token: keep the columns aligned.
        if (row && tokens[i - 1]?.type !== 'inline') row.push('');
        break;
      case 'tr_close':
        if (row) {
          if (inHead) header = row;
          else blocks.push({ kind: 'table_row', cells: row, ...(header ? { header } : {}) });
        }
        row = undefined;
        break;
      case 'fence':
      case 'code_block':
        flushItem();
        if (t.content.trim()) blocks.push({ kind: 'code', text: t.content.replace(/\n$/, '') });
        break;
      case 'html_block':
        if (t.content.trim()) blocks.push({ kind: 'paragraph', text: t.content.trim() });
        break;
    }
  }
  return { blocks, ...(title ? { title } : {}) };
}
