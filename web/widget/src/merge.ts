import type { Message } from './api';
import { type Item, messageItem } from './state';

/**
 * The poll's messages onto the timeline, apart from the DOM: a message already shown from this page's own turn is
 * not shown twice. Returns the timeline, how many of the team's replies were new (for the unread count), and how many
 * replies (the agent's or the team's) it added.
 */
export function mergeMessages(
  items: Item[],
  messages: Message[],
  known: Set<string>,
  nextKey: () => string,
): { items: Item[]; fromTeam: number; replies: number } {
  let fromTeam = 0;
  let replies = 0;
  for (const m of messages) {
    if (known.has(m.id)) continue;
    known.add(m.id);
    // A message of this page that has no id yet (an end frame without one): the same author and text is that one.
    const twin = items.find(
      (it) => !it.id && !(it.kind === 'message' && it.pending) && it.text === m.text && sameAuthor(it, m.author),
    );
    if (twin) {
      // It keeps what the end frame said; the poll fills in what that frame did not carry (its sources).
      const sources = twin.kind === 'message' && !twin.sources && m.author === 'bot' ? m.sources : undefined;
      items = items.map((it) =>
        it === twin ? ({ ...it, id: m.id, unclaimed: undefined, ...(sources ? { sources } : {}) } as Item) : it,
      );
      continue;
    }
    // A streamed answer the API stored as several messages (the agent's words, then the team's away words): each
    // stored one claims its part of the shown text, in order, and is not shown again.
    const whole = m.text
      ? items.find((it) => it.kind === 'message' && it.author === m.author && it.unclaimed?.startsWith(m.text))
      : undefined;
    if (whole?.kind === 'message') {
      const rest = whole.unclaimed!.slice(m.text.length).trimStart();
      items = items.map((it) => (it === whole ? { ...whole, id: whole.id ?? m.id, unclaimed: rest || undefined } : it));
      continue;
    }
    items = [...items, messageItem(nextKey(), m)];
    if (m.author === 'operator') fromTeam++;
    if (m.author === 'bot' || m.author === 'operator') replies++;
  }
  return { items, fromTeam, replies };
}

function sameAuthor(item: Item, author: string): boolean {
  if (item.kind === 'notice') return author === 'bot'; // an outage text stored as the bot's words
  return item.author === author;
}
