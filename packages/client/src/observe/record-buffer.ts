/**
 * One record waiting for export: its wire JSON (`toWire('productionRecord', record)`, serialised once, when it is
 * queued). A string holds a record in a fraction of the memory of its object graph, and its length is the exact size
 * the byte limits count.
 */
export type BufferedRecord = string;

/**
 * A FIFO of records with a running count and byte total (an array with a moving head, so taking a batch off the front
 * costs the batch, not the whole queue).
 */
export class RecordBuffer {
  #items: BufferedRecord[] = [];
  #head = 0;
  #bytes = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  get bytes(): number {
    return this.#bytes;
  }

  push(item: BufferedRecord): void {
    this.#items.push(item);
    this.#bytes += item.length;
  }

  /** The oldest records, at most `count` of them and about `maxBytes` (at least one), left in place. */
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

  /** Removes the `count` oldest records. */
  shift(count: number): void {
    const end = Math.min(this.#head + count, this.#items.length);
    for (let i = this.#head; i < end; i += 1) this.#bytes -= this.#items[i]!.length;
    this.#head = end;
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}
