import type { ComponentChildren } from 'preact';
import { type Block, type Inline, linkify, parseMarkdown } from './markdown';

/** A message's text drawn from its Markdown (web/shared/markdown.ts): elements and text nodes only, never HTML. */
export function MarkdownText(props: { text: string }) {
  return <>{parseMarkdown(props.text).map(block)}</>;
}

/** Text as it was typed (a visitor's message): its addresses are links, nothing else is read as Markdown. */
export function Linkified(props: { text: string }) {
  return <>{inlines(linkify(props.text))}</>;
}

function block(b: Block, key: number) {
  switch (b.type) {
    case 'paragraph':
      return <p key={key}>{inlines(b.children)}</p>;
    case 'heading':
      return (
        <p key={key}>
          <strong>{inlines(b.children)}</strong>
        </p>
      );
    case 'code':
      return (
        <pre key={key}>
          <code>{b.text}</code>
        </pre>
      );
    case 'list': {
      const items = b.items.map((item, i) => <li key={i}>{inlines(item)}</li>);
      return b.ordered ? (
        <ol key={key} start={b.start === 1 ? undefined : b.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
  }
}

function inlines(nodes: Inline[]): ComponentChildren {
  return nodes.map((n, i) => {
    switch (n.type) {
      case 'text':
        return n.text;
      case 'br':
        return <br key={i} />;
      case 'code':
        return <code key={i}>{n.text}</code>;
      case 'strong':
        return <strong key={i}>{inlines(n.children)}</strong>;
      case 'em':
        return <em key={i}>{inlines(n.children)}</em>;
      case 'link':
        return (
          <a key={i} href={n.href} target="_blank" rel="noopener noreferrer nofollow">
            {inlines(n.children)}
            {/* Where it really goes, when the text does not say so: part of the link's name for a screen reader. */}
            {n.host && <span class="link-host"> ({n.host})</span>}
          </a>
        );
    }
  });
}
