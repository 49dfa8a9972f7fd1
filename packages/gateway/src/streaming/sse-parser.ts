/** One server-sent event. */
export interface SseEvent {
  /** The `event:` field, or `null`. */
  event: string | null;
  /** The `data:` lines joined with `\n`. */
  data: string;
  /** The event's text without the blank line that ends it (line endings normalised to `\n`). */
  raw: string;
}

/** Incremental SSE parser: push text as it arrives, get back the events completed so far. */
export class SseParser {
  #buffer = '';
  #pendingCr = false;

  /** Adds text and returns every event it completes. */
  push(text: string): SseEvent[] {
    let chunk = text;
    if (this.#pendingCr) {
      chunk = `\r${chunk}`;
      this.#pendingCr = false;
    }
    if (chunk.endsWith('\r')) {
      this.#pendingCr = true;
      chunk = chunk.slice(0, -1);
    }
    this.#buffer += chunk.includes('\r') ? chunk.replace(/\r\n?/g, '\n') : chunk;
    const events: SseEvent[] = [];
    let boundary = this.#buffer.indexOf('\n\n');
    while (boundary !== -1) {
      const raw = this.#buffer.slice(0, boundary);
      this.#buffer = this.#buffer.slice(boundary + 2);
      const event = parseEvent(raw);
      if (event) events.push(event);
      boundary = this.#buffer.indexOf('\n\n');
    }
    return events;
  }

  /** Returns a last event that was not followed by a blank line, if any. */
  flush(): SseEvent[] {
    const raw = this.#buffer.trim();
    this.#buffer = '';
    if (raw === '') return [];
    const event = parseEvent(raw);
    return event ? [event] : [];
  }
}

function parseEvent(raw: string): SseEvent | null {
  let event: string | null = null;
  const data: string[] = [];
  for (const line of raw.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (event === null && data.length === 0) return null;
  return { event, data: data.join('\n'), raw };
}

/** Formats one SSE event. */
export function formatSse(data: string, event?: string | null): string {
  return `${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;
}
