/**
 * One record waiting for export: its wire JSON (`toWire('productionRecord', record)` serialised), or, for a `spans`
 * record the export loop has not taken yet, its wire object (serialised once, with its batch, off the request's path).
 * A string holds a record in a fraction of the memory of its object graph: a failed export serialises the whole queue.
 */
export type BufferedRecord = string | { readonly kind: 'spans'; readonly spans: ReadonlyArray<SpanLike> };

/** What {@link estimateSpansBytes} reads of a wire span. */
interface SpanLike {
  readonly name: string;
  readonly attributes: Readonly<Record<string, unknown>>;
  readonly events?: unknown;
}

/** What V8 adds to every string it keeps (header, hash, length) and the queue's slot for it, bytes (rounded up). */
const RECORD_OVERHEAD_BYTES = 32;
/** A character V8 cannot keep in a one-byte (Latin-1) string: the whole string is then stored two bytes a character. */
const TWO_BYTE = /[\u0100-\uffff]/;
/**
 * Characters of a wire span besides its name and attributes (ids, times, status, context, parent, resource), rounded
 * up: an OpenAI call span of the bench serialises to about 640 of them.
 */
const SPAN_FRAME_CHARS = 768;

/**
 * The memory a queued record really holds, bytes: V8 keeps a string one byte a character when every character is
 * Latin-1, else two bytes a character (one emoji or CJK character doubles the whole record), plus a fixed overhead per
 * record. This, not the character count, is what `maxBufferedBytes` bounds.
 */
export function recordBytes(record: string): number {
  return (TWO_BYTE.test(record) ? 2 : 1) * record.length + RECORD_OVERHEAD_BYTES;
}

/**
 * About what a `spans` record will hold once serialised ({@link recordBytes} of its JSON), from its spans' names and
 * attributes, without serialising it: the buffer's byte bound counts this until the export loop serialises the record
 * and counts its exact size instead.
 */
export function estimateSpansBytes(spans: ReadonlyArray<SpanLike>): number {
  let chars = 24;
  let wide = false;
  for (const span of spans) {
    chars += SPAN_FRAME_CHARS + span.name.length;
    if (Array.isArray(span.events)) chars += span.events.length * 256;
    const attributes = span.attributes;
    for (const key in attributes) {
      const value = attributes[key];
      chars += key.length + 6;
      if (typeof value === 'string') {
        chars += value.length;
        if (!wide && TWO_BYTE.test(value)) wide = true;
      } else if (Array.isArray(value)) {
        chars += value.length * 12 + 2;
      } else {
        chars += 24;
      }
    }
  }
  return (wide ? 2 : 1) * chars + RECORD_OVERHEAD_BYTES;
}

/**
 * A FIFO of records with a running count and byte total ({@link recordBytes}; an array with a moving head, so taking a
 * batch off the front costs the batch, not the whole queue).
 */
export class RecordBuffer {
  #items: BufferedRecord[] = [];
  #sizes: number[] = [];
  #head = 0;
  #bytes = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  /** Memory the queued records hold ({@link recordBytes} summed; estimated for records not serialised yet). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Queues `item`; `bytes` is its {@link recordBytes} (or, for an object, its estimate) when the caller has it. */
  push(
    item: BufferedRecord,
    bytes = typeof item === 'string' ? recordBytes(item) : estimateSpansBytes(item.spans),
  ): void {
    this.#items.push(item);
    this.#sizes.push(bytes);
    this.#bytes += bytes;
  }

  /** Item `i` as wire JSON: serialised (once, in place, its exact size counted) if it was still an object. */
  #json(i: number): string {
    const item = this.#items[i]!;
    if (typeof item === 'string') return item;
    const json = JSON.stringify(item);
    const bytes = recordBytes(json);
    this.#items[i] = json;
    this.#bytes += bytes - this.#sizes[i]!;
    this.#sizes[i] = bytes;
    return json;
  }

  /**
   * The oldest records as wire JSON, at most `count` of them and about `maxBytes` of it (at least one), left in place
   * (serialised there as they are taken).
   */
  peek(count: number, maxBytes: number): string[] {
    const out: string[] = [];
    let bytes = 0;
    for (let i = this.#head; i < this.#items.length && out.length < count; i += 1) {
      const item = this.#json(i);
      if (out.length > 0 && bytes + item.length > maxBytes) break;
      out.push(item);
      bytes += item.length;
    }
    return out;
  }

  /** Serialises every queued record still kept as an object (the buffer then holds wire JSON only). */
  serializeAll(): void {
    for (let i = this.#head; i < this.#items.length; i += 1) this.#json(i);
  }

  /** Every queued record as wire JSON, oldest first, left in place. */
  all(): string[] {
    this.serializeAll();
    return this.#items.slice(this.#head) as string[];
  }

  /** Removes the `count` oldest records. */
  shift(count: number): void {
    const end = Math.min(this.#head + count, this.#items.length);
    for (let i = this.#head; i < end; i += 1) this.#bytes -= this.#sizes[i]!;
    this.#head = end;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#sizes = this.#sizes.slice(this.#head);
      this.#head = 0;
    }
  }
}
