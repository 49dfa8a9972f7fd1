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
    if (c === 0x22) {
      i = closingQuote(text, i + 1);
      if (i < 0) break;
    } else if (c === 0x7b || c === 0x5b) {
      max = Math.max(max, ++depth);
      values++;
    } else if (c === 0x2c) values++;
    else if (c === 0x7d || c === 0x5d) depth--;
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
    while (text.charCodeAt(j - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return j;
  }
  return -1;
}

/**
 * Index just past the JSON value that starts at `at`, for scanners that skip values they do not look into: a string
 * to its closing quote, an object or array to its matching bracket (strings inside skipped), a number or literal up to
 * the next structural character or whitespace. -1 when there is no value there, or it never ends, or its brackets do
 * not pair up. Only quotes and brackets are checked, not the JSON inside.
 */
export function valueEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) {
    const quote = closingQuote(text, at + 1);
    return quote < 0 ? -1 : quote + 1;
  }
  if (c === 0x7b || c === 0x5b) return containerEnd(text, at);
  let j = at;
  for (let d = c; j < text.length && d > 0x20 && !STRUCTURAL.has(d); d = text.charCodeAt(++j));
  return j === at ? -1 : j;
}

/** `"` `,` `:` `[` `]` `{` `}`. */
const STRUCTURAL = new Set([0x22, 0x2c, 0x3a, 0x5b, 0x5d, 0x7b, 0x7d]);

/** Index just past the object or array that opens at `open`, or -1 (see {@link valueEnd}). */
function containerEnd(text: string, open: number): number {
  // The closers still expected, innermost last (`}` = 0x7d and `]` = 0x5d are their openers + 2).
  const closers: number[] = [];
  for (let j = open; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === 0x22) {
      j = closingQuote(text, j + 1);
      if (j < 0) return -1;
    } else if (c === 0x7b || c === 0x5b) closers.push(c + 2);
    else if (c === 0x7d || c === 0x5d) {
      if (closers.pop() !== c) return -1;
      if (closers.length === 0) return j + 1;
    }
  }
  return -1;
}
