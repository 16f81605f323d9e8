/** One server-sent event: its `event:` name (null when absent) and its `data:` lines joined with newlines. */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * Decodes a `text/event-stream` body (the HTML standard's event stream interpretation) from text pieces as they come
 * off the network, returning every event a piece completes at once. Synchronous on purpose: a model's stream brings
 * many small events per network read, and handing them over one by one through async iterators costs more CPU than
 * the rest of the turn's streaming (bench/load.ts). Lines may end in LF, CRLF or CR; comments and unknown fields are
 * ignored; an event without data is not dispatched.
 */
export class SseDecoder {
  private buffer = '';
  private data: string[] = [];
  private event: string | null = null;
  /** The previous piece ended in CR: a LF starting this one belongs to that line ending. */
  private pendingCr = false;

  push(text: string): ServerSentEvent[] {
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = text.endsWith('\r');
    const events: ServerSentEvent[] = [];
    const all = this.buffer + text;
    let start = 0;
    for (;;) {
      const lf = all.indexOf('\n', start);
      const cr = all.indexOf('\r', start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      this.line(all.slice(start, end), events);
      start = end + (all[end] === '\r' && all[end + 1] === '\n' ? 2 : 1);
    }
    this.buffer = all.slice(start);
    return events;
  }

  /** The body ended: an event not closed by a blank line is discarded, as the standard says. */
  end(): void {
    this.buffer = '';
    this.data = [];
    this.event = null;
  }

  private line(line: string, events: ServerSentEvent[]): void {
    if (line === '') {
      if (this.data.length) events.push({ event: this.event, data: this.data.join('\n') });
      this.data = [];
      this.event = null;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }
}
