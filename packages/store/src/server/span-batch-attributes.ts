import {
  BACKSLASH,
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  JsonScanMismatch,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  closingQuote,
  skipValue,
  stringEnd,
} from '@agl/core/internal/json-scan';

/** A span batch body with each span's attribute map taken out as JSON text. */
export interface ExtractedSpanBatch {
  /** The body with every extracted attribute map replaced by `{}`. */
  reduced: string;
  /** Per span of `spans`, in order: its attribute map as JSON text, or null when it was left in place. */
  attributesJson: Array<string | null>;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPES = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * Finds the attribute map of every span in a `POST /spans/batch` body (`{"spans":[{…,"attributes":{…},…}],…}`) and
 * takes it out as JSON text, checked to be exactly what the span schema accepts: string keys (never `__proto__`),
 * values that are strings, finite numbers, booleans, null, or arrays of strings, finite numbers and booleans. The
 * store keeps that text as it is, so the server never builds the maps as objects: parsing attribute maps whose keys
 * change from span to span is the most expensive step of span ingestion in V8 (a hidden class per new key).
 *
 * Only compact maps are taken (what `JSON.stringify` writes; `json.dumps` spacing is left to the usual parse). Returns
 * null when the body is not a JSON object with a `spans` array, or when any text it would take out is malformed: the
 * caller then parses the whole body and gets the usual errors.
 */
export function extractSpanAttributes(text: string): ExtractedSpanBatch | null {
  try {
    return new SpanBatchScanner(text).run();
  } catch (error) {
    if (error instanceof JsonScanMismatch) return null;
    throw error;
  }
}

class SpanBatchScanner {
  readonly #text: string;
  #i = 0;
  #out = '';
  #copied = 0;
  readonly #attributes: Array<string | null> = [];

  constructor(text: string) {
    this.#text = text;
  }

  run(): ExtractedSpanBatch {
    this.#ws();
    let spansSeen = false;
    this.#members((key) => {
      if (key !== 'spans') return this.#skip();
      // JSON.parse keeps the last of duplicate keys; the scanner would take both: leave such bodies to it.
      if (spansSeen || this.#peek() !== OPEN_BRACKET) throw new JsonScanMismatch();
      spansSeen = true;
      this.#spans();
    });
    this.#ws();
    if (this.#i !== this.#text.length || !spansSeen) throw new JsonScanMismatch();
    return { reduced: this.#out + this.#text.slice(this.#copied), attributesJson: this.#attributes };
  }

  #spans(): void {
    this.#i += 1;
    this.#ws();
    if (this.#peek() === CLOSE_BRACKET) {
      this.#i += 1;
      return;
    }
    for (;;) {
      this.#ws();
      const index = this.#attributes.length;
      this.#attributes.push(null);
      if (this.#peek() === OPEN_BRACE) {
        let attributesSeen = false;
        this.#members((key) => {
          if (key !== 'attributes') return this.#skip();
          if (attributesSeen) throw new JsonScanMismatch();
          attributesSeen = true;
          if (this.#peek() === OPEN_BRACE) this.#attributeMap(index);
          else this.#skip();
        });
      } else this.#skip();
      this.#ws();
      const c = this.#text.charCodeAt(this.#i++);
      if (c === CLOSE_BRACKET) return;
      if (c !== COMMA) throw new JsonScanMismatch();
    }
  }

  /** Calls `onValue` at each member's value of the object at `#i` (which must be `{`), keys decoded. */
  #members(onValue: (key: string) => void): void {
    if (this.#peek() !== OPEN_BRACE) throw new JsonScanMismatch();
    this.#i += 1;
    this.#ws();
    if (this.#peek() === CLOSE_BRACE) {
      this.#i += 1;
      return;
    }
    for (;;) {
      this.#ws();
      const start = this.#i;
      const end = this.#stringEnd();
      const raw = this.#text.slice(start + 1, end - 1);
      const key = raw.includes('\\') ? decodeKey(this.#text.slice(start, end)) : raw;
      this.#i = end;
      this.#ws();
      if (this.#text.charCodeAt(this.#i++) !== COLON) throw new JsonScanMismatch();
      this.#ws();
      onValue(key);
      this.#ws();
      const c = this.#text.charCodeAt(this.#i++);
      if (c === CLOSE_BRACE) return;
      if (c !== COMMA) throw new JsonScanMismatch();
    }
  }

  /** A compact attribute map at `#i`: checked, taken out, `{}` left in its place. */
  #attributeMap(index: number): void {
    const text = this.#text;
    const start = this.#i;
    let i = start + 1;
    if (text.charCodeAt(i) !== CLOSE_BRACE) {
      for (;;) {
        if (text.charCodeAt(i) !== QUOTE) throw new JsonScanMismatch();
        const keyEnd = this.#checkedString(i);
        if (keyEnd - i === 11 && text.startsWith('"__proto__"', i)) throw new JsonScanMismatch();
        if (text.charCodeAt(keyEnd) !== COLON) throw new JsonScanMismatch();
        i = this.#attributeValue(keyEnd + 1);
        const c = text.charCodeAt(i);
        if (c === CLOSE_BRACE) break;
        if (c !== COMMA) throw new JsonScanMismatch();
        i += 1;
      }
    }
    const end = i + 1;
    this.#attributes[index] = text.slice(start, end);
    this.#out += `${text.slice(this.#copied, start)}{}`;
    this.#copied = end;
    this.#i = end;
  }

  /** Index past an attribute value starting at `i`: a primitive, null, or an array of primitives. */
  #attributeValue(i: number): number {
    const text = this.#text;
    const c = text.charCodeAt(i);
    if (c === OPEN_BRACKET) {
      let j = i + 1;
      if (text.charCodeAt(j) === CLOSE_BRACKET) return j + 1;
      for (;;) {
        j = this.#primitive(j);
        const d = text.charCodeAt(j);
        if (d === CLOSE_BRACKET) return j + 1;
        if (d !== COMMA) throw new JsonScanMismatch();
        j += 1;
      }
    }
    if (text.startsWith('null', i)) return i + 4;
    return this.#primitive(i);
  }

  /** Index past a string, a finite number, `true` or `false` starting at `i`. */
  #primitive(i: number): number {
    const text = this.#text;
    const c = text.charCodeAt(i);
    if (c === QUOTE) return this.#checkedString(i);
    if (text.startsWith('true', i)) return i + 4;
    if (text.startsWith('false', i)) return i + 5;
    NUMBER.lastIndex = i;
    const match = NUMBER.exec(text);
    if (match === null || !Number.isFinite(Number(match[0]))) throw new JsonScanMismatch();
    return i + match[0].length;
  }

  /** Index past the string at `i`, whose escapes and characters are checked (JSON.parse would accept it). */
  #checkedString(i: number): number {
    const text = this.#text;
    const quote = closingQuote(text, i + 1);
    if (quote < 0) throw new JsonScanMismatch();
    for (let j = i + 1; j < quote; j += 1) {
      const d = text.charCodeAt(j);
      if (d < 0x20) throw new JsonScanMismatch();
      if (d === BACKSLASH) {
        ESCAPES.lastIndex = j;
        const match = ESCAPES.exec(text);
        if (match === null) throw new JsonScanMismatch();
        j += match[0].length - 1;
      }
    }
    return quote + 1;
  }

  #peek(): number {
    return this.#text.charCodeAt(this.#i);
  }

  #ws(): void {
    const text = this.#text;
    for (
      let c = text.charCodeAt(this.#i);
      c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
      c = text.charCodeAt(++this.#i)
    );
  }

  #stringEnd(): number {
    if (this.#peek() !== QUOTE) throw new JsonScanMismatch();
    return stringEnd(this.#text, this.#i + 1);
  }

  /** Moves past any value without looking into it; the usual parse of the reduced body checks what it skipped. */
  #skip(): void {
    this.#i = skipValue(this.#text, this.#i);
  }
}

function decodeKey(quoted: string): string {
  try {
    return JSON.parse(quoted) as string;
  } catch {
    throw new JsonScanMismatch();
  }
}
