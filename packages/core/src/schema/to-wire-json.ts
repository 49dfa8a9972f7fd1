import {
  CLOSE_BRACE,
  CLOSE_BRACKET,
  COLON,
  COMMA,
  JsonScanMismatch,
  OPEN_BRACE,
  OPEN_BRACKET,
  QUOTE,
  skipValue,
  stringEnd,
} from '../internal/json-scan';
import { WIRE_SHAPES, plansOf, toWire, type Shape, type WireShape } from './wire-codec';

/**
 * Rewrites the JSON text of a camelCase API object into the JSON text of its snake_case wire form, without parsing it
 * into objects: only the known keys of `shape` (and of its nested typed fields) are renamed, and everything else,
 * opaque values such as span attributes above all, is copied byte for byte. The result equals
 * `JSON.stringify(toWire(shape, JSON.parse(json)))` (arrays item by item) for the JSON that `JSON.stringify` writes; other input (odd
 * whitespace, escaped keys, malformed text) goes through that slow path instead.
 *
 * Store servers use it to answer span queries straight from the stored documents: parsing span attributes with
 * random keys costs V8 several times more than reading the same bytes with fixed keys (every new key makes a new
 * hidden class), and the bytes are not needed as objects at all.
 */
export function toWireJson(shape: WireShape, json: string): string {
  try {
    const scanner = new WireJsonScanner(json);
    scanner.top(WIRE_SHAPES[shape]);
    return scanner.finish();
  } catch (error) {
    if (!(error instanceof JsonScanMismatch)) throw error;
    return JSON.stringify(toWire(shape, JSON.parse(json)));
  }
}

/** A single pass over compact JSON: copies ranges verbatim and writes renamed keys in between. */
class WireJsonScanner {
  readonly #text: string;
  #i = 0;
  /** Start of the range not yet copied to `#out`. */
  #copied = 0;
  #out = '';

  constructor(text: string) {
    this.#text = text;
  }

  finish(): string {
    if (this.#i !== this.#text.length) throw new JsonScanMismatch();
    return this.#out + this.#text.slice(this.#copied);
  }

  /** The whole text: like `toWire`, an array is converted item by item. */
  top(shape: Shape): void {
    if (this.#text.charCodeAt(this.#i) === OPEN_BRACKET) this.#items(shape);
    else this.value(shape);
  }

  /** One value; with a shape, objects get their keys renamed (convert() semantics: non-objects pass unchanged). */
  value(shape: Shape | null): void {
    if (shape !== null && this.#text.charCodeAt(this.#i) === OPEN_BRACE) this.#object(shape);
    else this.#skip();
  }

  #object(shape: Shape): void {
    const text = this.#text;
    const plans = plansOf(shape, true);
    this.#i += 1;
    if (text.charCodeAt(this.#i) === CLOSE_BRACE) {
      this.#i += 1;
      return;
    }
    for (;;) {
      const keyStart = this.#i;
      const keyEnd = this.#stringEnd();
      const key = text.slice(keyStart + 1, keyEnd - 1);
      if (key.includes('\\')) throw new JsonScanMismatch();
      const plan = plans.get(key);
      if (plan && plan.outKey !== key) {
        this.#out += `${text.slice(this.#copied, keyStart)}"${plan.outKey}"`;
        this.#copied = keyEnd;
      }
      this.#i = keyEnd;
      this.#expect(COLON);
      const nested = plan?.nested;
      const c = text.charCodeAt(this.#i);
      if (nested === undefined || c !== (nested.kind === 'many' ? OPEN_BRACKET : OPEN_BRACE)) this.#skip();
      else if (nested.kind === 'one') this.#object(nested.shape());
      else if (nested.kind === 'many') this.#items(nested.shape());
      else this.#record(nested.shape());
      if (!this.#next(CLOSE_BRACE)) return;
    }
  }

  /** An array whose object items have `shape`. */
  #items(shape: Shape): void {
    this.#i += 1;
    if (this.#text.charCodeAt(this.#i) === CLOSE_BRACKET) {
      this.#i += 1;
      return;
    }
    do this.value(shape);
    while (this.#next(CLOSE_BRACKET));
  }

  /** An object whose keys are kept and whose object values have `shape`. */
  #record(shape: Shape): void {
    this.#i += 1;
    if (this.#text.charCodeAt(this.#i) === CLOSE_BRACE) {
      this.#i += 1;
      return;
    }
    do {
      this.#i = this.#stringEnd();
      this.#expect(COLON);
      this.value(shape);
    } while (this.#next(CLOSE_BRACE));
  }

  /** After a member: true at a comma (moves past it), false at `close` (moves past it). */
  #next(close: number): boolean {
    const c = this.#text.charCodeAt(this.#i);
    this.#i += 1;
    if (c === COMMA) return true;
    if (c === close) return false;
    throw new JsonScanMismatch();
  }

  #expect(code: number): void {
    if (this.#text.charCodeAt(this.#i) !== code) throw new JsonScanMismatch();
    this.#i += 1;
  }

  /** Index just past the string that starts at `#i`. */
  #stringEnd(): number {
    if (this.#text.charCodeAt(this.#i) !== QUOTE) throw new JsonScanMismatch();
    return stringEnd(this.#text, this.#i + 1);
  }

  /** Moves past one value of any kind without looking inside it (a malformed one surfaces at the next delimiter). */
  #skip(): void {
    this.#i = skipValue(this.#text, this.#i);
  }
}
