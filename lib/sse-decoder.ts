import { type EventSourceParser, createParser } from 'eventsource-parser';

/** One server-sent event: its `event:` name (null when absent) and its `data:` lines joined with newlines. */
export interface ServerSentEvent {
  event: string | null;
  data: string;
}

/**
 * Decodes a `text/event-stream` body from text pieces as they come off the network, returning every event a piece
 * completes at once. The parsing is `eventsource-parser`'s (the HTML standard's interpretation: LF, CRLF or CR line
 * ends, comments and unknown fields ignored, an event without data not dispatched); this adapter only collects what it
 * dispatches. Synchronous on purpose: a model's stream brings many small events per network read, and handing them
 * over one by one through async iterators costs more CPU than the rest of the turn's streaming (bench/load.ts).
 */
export class SseDecoder {
  private events: ServerSentEvent[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: (e) => this.events.push({ event: e.event ?? null, data: e.data }),
  });

  push(text: string): ServerSentEvent[] {
    this.parser.feed(text);
    const events = this.events;
    this.events = [];
    return events;
  }

  /** The body ended: an event not closed by a blank line is discarded, as the standard says. */
  end(): void {
    this.parser.reset();
    this.events = [];
  }
}
