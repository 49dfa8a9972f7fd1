/**
 * One record waiting for export: its wire JSON (`toWire('productionRecord', record)`, serialised once, when it is
 * queued). A string holds a record in a fraction of the memory of its object graph.
 */
export type BufferedRecord = string;

/** What V8 adds to every string it keeps (header, hash, length) and the queue's slot for it, bytes (rounded up). */
const RECORD_OVERHEAD_BYTES = 32;
/** A character V8 cannot keep in a one-byte (Latin-1) string: the whole string is then stored two bytes a character. */
const TWO_BYTE = /[\u0100-\uffff]/;

/**
 * The memory a queued record really holds, bytes: V8 keeps a string one byte a character when every character is
 * Latin-1, else two bytes a character (one emoji or CJK character doubles the whole record), plus a fixed overhead per
 * record. This, not the character count, is what `maxBufferedBytes` bounds.
 */
export function recordBytes(record: BufferedRecord): number {
  return (TWO_BYTE.test(record) ? 2 : 1) * record.length + RECORD_OVERHEAD_BYTES;
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

  /** Memory the queued records hold ({@link recordBytes} summed). */
  get bytes(): number {
    return this.#bytes;
  }

  /** Queues `item`; `bytes` is its {@link recordBytes} when the caller measured it already. */
  push(item: BufferedRecord, bytes = recordBytes(item)): void {
    this.#items.push(item);
    this.#sizes.push(bytes);
    this.#bytes += bytes;
  }

  /** The oldest records, at most `count` of them and about `maxBytes` of wire JSON (at least one), left in place. */
  peek(count: number, maxBytes: number): BufferedRecord[] {
    const out: BufferedRecord[] = [];
    let bytes = 0;
    for (let i = this.#head; i < this.#items.length && out.length < count; i += 1) {
      const item = this.#items[i]!;
      if (out.length > 0 && bytes + item.length > maxBytes) break;
      out.push(item);
      bytes += item.length;
    }
    return out;
  }

  /** Every queued record, oldest first, left in place. */
  all(): BufferedRecord[] {
    return this.#items.slice(this.#head);
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
