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

// ---------------------------------------------------------------------------------------------------------------------
// A strict scanner over UTF-8 bytes (the gateway's): where a value sits in a JSON text, without decoding or building
// it. The gateway takes a backend answer's `logprobs.content` list (most of the bytes of a training call's answer) out
// of the body as-is with it, so that list is neither parsed into objects nor serialised again for the span. JSON's
// structure is ASCII, so multi-byte UTF-8 sequences can only sit inside strings, where any byte from 0x20 up is taken
// as it is. Every read is bounds-checked and character classes come from 256-entry tables (about 2 ns per byte).
// ---------------------------------------------------------------------------------------------------------------------

/** `]` and `}` are `[` and `{` plus two. */
const CLOSE_OFFSET = 2;
/** Deepest nesting {@link scanValue} follows; deeper values count as invalid (callers then parse normally). */
export const MAX_SCAN_DEPTH = 128;
const containers = new Uint8Array(MAX_SCAN_DEPTH);

const table = (chars: string): Uint8Array => {
  const t = new Uint8Array(256);
  for (let k = 0; k < chars.length; k += 1) t[chars.charCodeAt(k)] = 1;
  return t;
};
const WHITESPACE = table(' \n\r\t');
const HEX = table('0123456789abcdefABCDEF');
/** Characters allowed right after a backslash, `u` aside. */
const SIMPLE_ESCAPE = table('"\\/bfnrt');
/** 1 for the bytes that stand for themselves inside a JSON string (not a quote, a backslash or a control character). */
const PLAIN = new Uint8Array(256);
for (let c = 0x20; c < 256; c += 1) PLAIN[c] = c === QUOTE || c === BACKSLASH ? 0 : 1;

/**
 * Index of the first non-whitespace character at or after `i` (or the text's length). `scanKey` and `scanValue`
 * repeat this loop inline: calling it there made the bench's 14 kB answer take 32 µs instead of 27.
 */
export function skipWhitespace(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
  return i;
}

/** End (exclusive) of the string starting at `i` (a `"`), or -1 when it is not a valid JSON string. */
function scanString(b: Uint8Array, i: number, n: number): number {
  i += 1;
  for (;;) {
    while (i < n && PLAIN[b[i]!] === 1) i += 1;
    if (i >= n) return -1;
    const c = b[i]!;
    if (c === QUOTE) return i + 1;
    if (c !== BACKSLASH || i + 1 >= n) return -1; // a control character, or a backslash at the very end
    const e = b[i + 1]!;
    if (e === 0x75) {
      if (i + 5 >= n || HEX[b[i + 2]!] === 0 || HEX[b[i + 3]!] === 0 || HEX[b[i + 4]!] === 0 || HEX[b[i + 5]!] === 0)
        return -1;
      i += 6;
    } else if (SIMPLE_ESCAPE[e] === 1) i += 2;
    else return -1;
  }
}

/** End of the digits from `i` (possibly `i` itself). */
function scanDigits(b: Uint8Array, i: number, n: number): number {
  for (;;) {
    if (i >= n) return i;
    const c = b[i]!;
    if (c < 0x30 || c > 0x39) return i;
    i += 1;
  }
}

/** End of the number starting at `i`, or -1. */
function scanNumber(b: Uint8Array, i: number, n: number): number {
  if (i < n && b[i] === 0x2d) i += 1;
  if (i >= n) return -1;
  const first = b[i]!;
  if (first === 0x30) i += 1;
  else if (first >= 0x31 && first <= 0x39) i = scanDigits(b, i + 1, n);
  else return -1;
  if (i < n && b[i] === 0x2e) {
    const fraction = i + 1;
    if ((i = scanDigits(b, fraction, n)) === fraction) return -1;
  }
  if (i < n && (b[i] === 0x65 || b[i] === 0x45)) {
    i += 1;
    if (i < n && (b[i] === 0x2b || b[i] === 0x2d)) i += 1;
    const exponent = i;
    if ((i = scanDigits(b, exponent, n)) === exponent) return -1;
  }
  return i;
}

/** End of the object key plus colon at `i` (whitespace after the colon skipped), or -1. */
function scanKey(b: Uint8Array, i: number): number {
  const n = b.length;
  if (i >= n || b[i] !== QUOTE || (i = scanString(b, i, n)) < 0) return -1;
  while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
  if (i >= n || b[i] !== COLON) return -1;
  i += 1;
  while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
  return i;
}

/** True when the bytes at `at` spell the ASCII string `s`. */
function isAscii(b: Uint8Array, at: number, s: string): boolean {
  if (at + s.length > b.length) return false;
  for (let j = 0; j < s.length; j += 1) if (b[at + j] !== s.charCodeAt(j)) return false;
  return true;
}

/**
 * End (exclusive) of the JSON value that starts at `i` (after optional whitespace), or -1 when the text there is not
 * a valid JSON value (or nests deeper than {@link MAX_SCAN_DEPTH}). Iterative: no recursion, no allocation.
 */
export function scanValue(b: Uint8Array, i: number): number {
  const n = b.length;
  let depth = 0;
  while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
  for (;;) {
    // One value at i.
    if (i >= n) return -1;
    const c = b[i]!;
    if (c === QUOTE) {
      if ((i = scanString(b, i, n)) < 0) return -1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      i += 1;
      while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
      if (i < n && b[i] === c + CLOSE_OFFSET) i += 1;
      else {
        if (depth === MAX_SCAN_DEPTH) return -1;
        containers[depth] = c;
        depth += 1;
        if (c === OPEN_BRACE && (i = scanKey(b, i)) < 0) return -1;
        continue;
      }
    } else if (c === 0x74) {
      if (!isAscii(b, i, 'true')) return -1;
      i += 4;
    } else if (c === 0x66) {
      if (!isAscii(b, i, 'false')) return -1;
      i += 5;
    } else if (c === 0x6e) {
      if (!isAscii(b, i, 'null')) return -1;
      i += 4;
    } else if ((i = scanNumber(b, i, n)) < 0) return -1;
    // After a value: a comma (next member or element) or the end of one or more containers.
    for (;;) {
      if (depth === 0) return i;
      while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
      if (i >= n) return -1;
      const next = b[i]!;
      const open = containers[depth - 1]!;
      if (next === COMMA) {
        i += 1;
        while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
        if (open === OPEN_BRACE && (i = scanKey(b, i)) < 0) return -1;
        break;
      }
      if (next !== open + CLOSE_OFFSET) return -1;
      i += 1;
      depth -= 1;
    }
  }
}

/** Where a value sits in a JSON text: bytes `start` to `end` (exclusive) are its JSON. */
export interface JsonRange {
  start: number;
  end: number;
}

/** What {@link walk} found at the end of its path (the last duplicate member wins). */
interface Found {
  range: JsonRange | null;
}

/** True when a backslash sits between `from` and `to` (exclusive). */
function hasBackslash(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (b[i] === BACKSLASH) return true;
  return false;
}

/**
 * Scans the value at `i` (whitespace already skipped) like {@link scanValue}, following `path[k..]` into it and
 * recording the range of the value at the end of the path in `found`. Returns the end of the value, or -1.
 */
function walk(b: Uint8Array, i: number, path: readonly (string | 0)[], k: number, found: Found): number {
  if (k === path.length) {
    const end = scanValue(b, i);
    if (end >= 0) found.range = { start: i, end };
    return end;
  }
  const step = path[k]!;
  const c = b[i];
  if (c !== (step === 0 ? OPEN_BRACKET : OPEN_BRACE)) return scanValue(b, i);
  const close = step === 0 ? CLOSE_BRACKET : CLOSE_BRACE;
  i = skipWhitespace(b, i + 1);
  if (b[i] === close) return i + 1;
  for (let index = 0; ; index += 1) {
    let follow = step === 0 && index === 0;
    if (step !== 0) {
      const keyStart = i;
      if ((i = scanKey(b, i)) < 0) return -1;
      const keyEnd = b.lastIndexOf(QUOTE, i - 1);
      // An escaped key might decode to the step; rather than decode it, give up (the caller then parses everything).
      if (hasBackslash(b, keyStart + 1, keyEnd)) return -1;
      follow = keyEnd - keyStart - 1 === step.length && isAscii(b, keyStart + 1, step);
      // As in JSON.parse, the last duplicate member wins: forget what an earlier one held.
      if (follow) found.range = null;
    }
    if ((i = follow ? walk(b, i, path, k + 1, found) : scanValue(b, i)) < 0) return -1;
    i = skipWhitespace(b, i);
    const next = b[i];
    if (next === close) return i + 1;
    if (next !== COMMA) return -1;
    i = skipWhitespace(b, i + 1);
  }
}

/**
 * The range of the value at `path` in a JSON text (strings name object members, `0` the first array element), or
 * `null` when it is absent, when the text is not valid JSON, or when a key on the way is escaped. One pass over the
 * text; every value on the way is checked to be valid JSON but none is built.
 */
export function findJsonPath(b: Uint8Array, path: readonly (string | 0)[]): JsonRange | null {
  const found: Found = { range: null };
  const end = walk(b, skipWhitespace(b, 0), path, 0, found);
  if (end < 0 || skipWhitespace(b, end) !== b.length) return null;
  return found.range;
}
