/**
 * Raw-JSON scanning shared by the AGL packages: reading JSON text without parsing it into objects (counting its
 * structure, skipping values, finding where strings end). Internal: `@agl/core/internal/json-scan` is not public API
 * and may change in any release; use it only from the AGL packages.
 *
 * The scanners built on it (`toWireJson` here, the store server's span-batch reader, the gateway's readers) take
 * compact JSON as `JSON.stringify` writes it and throw {@link JsonScanMismatch} at anything else, and their callers
 * then take the standard path (`JSON.parse`), which also words the error.
 *
 * @packageDocumentation
 */

/** Character codes of JSON's structural characters. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;

/** Thrown inside a scanner when the text is not the JSON it takes; the caller then parses the text the usual way. */
export class JsonScanMismatch extends Error {
  constructor() {
    super('JSON text outside what the scanner takes');
  }
}

/** Deepest JSON nesting (objects and arrays) the store server and the gateway accept in a request body. */
export const MAX_JSON_DEPTH = 256;

/** What {@link jsonStructure} counts in a JSON text. */
export interface JsonStructure {
  /** Deepest nesting of objects and arrays. */
  depth: number;
  /**
   * Values inside objects and arrays, counted as brackets plus commas (so an array of n items counts n + 1, an empty
   * object 1): about what `JSON.parse` will allocate, whatever the values' sizes.
   */
  values: number;
}

/**
 * The nesting depth and value count of a JSON text, counted without parsing (brackets and commas inside strings are
 * skipped), so a hostile body is refused before it costs anything: 100,000 nested arrays, which would overflow the
 * stack of a recursive validator, or 32 MiB of `{},{},...`, which would cost `JSON.parse` a gigabyte. Strings, most
 * of a typical body, are skipped with `indexOf` rather than character by character. Stops counting as soon as
 * `stopAt` values are seen (the answer is then `stopAt` or more).
 */
export function jsonStructure(text: string, stopAt = Infinity): JsonStructure {
  let depth = 0;
  let max = 0;
  let values = 0;
  for (let i = 0; i < text.length && values < stopAt; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = closingQuote(text, i + 1);
      if (i < 0) break;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      max = Math.max(max, ++depth);
      values++;
    } else if (c === COMMA) values++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return { depth: max, values };
}

/** The nesting depth of a JSON text, counted without parsing (see {@link jsonStructure}). */
export function jsonDepth(text: string): number {
  return jsonStructure(text).depth;
}

/** Index of the quote that ends the JSON string whose content starts at `from`, or -1 when it never ends. */
export function closingQuote(text: string, from: number): number {
  for (let j = text.indexOf('"', from); j >= 0; j = text.indexOf('"', j + 1)) {
    let backslashes = 0;
    while (text.charCodeAt(j - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
  return -1;
}

/** Index just past the closing quote of the string whose content starts at `from`; throws {@link JsonScanMismatch}. */
export function stringEnd(text: string, from: number): number {
  const quote = closingQuote(text, from);
  if (quote < 0) throw new JsonScanMismatch();
  return quote + 1;
}

/**
 * Index just past the JSON value that starts at `at`, for scanners that skip values they do not look into: a string
 * to its closing quote, an object or array to its matching bracket (strings inside skipped), a number or literal up to
 * the next structural character or whitespace. -1 when there is no value there, or it never ends, or its brackets do
 * not pair up. Only quotes and brackets are checked, not the JSON inside.
 */
export function valueEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === QUOTE) {
    const quote = closingQuote(text, at + 1);
    return quote < 0 ? -1 : quote + 1;
  }
  if (c === OPEN_BRACE || c === OPEN_BRACKET) return containerEnd(text, at);
  let j = at;
  for (let d = c; j < text.length && d > 0x20 && !STRUCTURAL.has(d); d = text.charCodeAt(++j));
  return j === at ? -1 : j;
}

/** `"` `,` `:` `[` `]` `{` `}`. */
const STRUCTURAL = new Set([QUOTE, COMMA, COLON, OPEN_BRACKET, CLOSE_BRACKET, OPEN_BRACE, CLOSE_BRACE]);

/** Index just past the object or array that opens at `open`, or -1 (see {@link valueEnd}). */
function containerEnd(text: string, open: number): number {
  // The closers still expected, innermost last (`}` and `]` are their openers + 2).
  const closers: number[] = [];
  for (let j = open; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === QUOTE) {
      j = closingQuote(text, j + 1);
      if (j < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) closers.push(c + 2);
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (closers.pop() !== c) return -1;
      if (closers.length === 0) return j + 1;
    }
  }
  return -1;
}

/** Index just past the value at `at`; throws {@link JsonScanMismatch} where {@link valueEnd} finds none. */
export function skipValue(text: string, at: number): number {
  const end = valueEnd(text, at);
  if (end < 0) throw new JsonScanMismatch();
  return end;
}
