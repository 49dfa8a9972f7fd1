/**
 * A strict, allocation-free JSON scanner over UTF-8 bytes: it finds where a value sits in a JSON text without decoding
 * or building it. The gateway uses it to take a backend answer's `logprobs.content` list (most of the bytes of a
 * training call's answer) out of the body as-is, so that list is neither parsed into objects nor serialised again for
 * the span. JSON's structure is ASCII, so multi-byte UTF-8 sequences can only sit inside strings, where any byte from
 * 0x20 up is taken as it is (decoding happens later, exactly as for the whole body).
 *
 * Every read is bounds-checked against the text's length and character classes come from 256-entry tables: the
 * scanner is on every training call's path (about 2 ns per byte here).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
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
export function scanKey(b: Uint8Array, i: number): number {
  const n = b.length;
  if (i >= n || b[i] !== QUOTE || (i = scanString(b, i, n)) < 0) return -1;
  while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
  if (i >= n || b[i] !== COLON) return -1;
  i += 1;
  while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
  return i;
}

/** True when the bytes at `at` spell the ASCII string `s`. */
export function isAscii(b: Uint8Array, at: number, s: string): boolean {
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
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      i += 1;
      while (i < n && WHITESPACE[b[i]!] === 1) i += 1;
      if (i < n && b[i] === c + CLOSE_OFFSET) i += 1;
      else {
        if (depth === MAX_SCAN_DEPTH) return -1;
        containers[depth] = c;
        depth += 1;
        if (c === OPEN_OBJECT && (i = scanKey(b, i)) < 0) return -1;
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
        if (open === OPEN_OBJECT && (i = scanKey(b, i)) < 0) return -1;
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

interface Found {
  range: JsonRange | null;
  skip: ((start: number) => number) | undefined;
}

export function hasBackslash(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i += 1) if (b[i] === BACKSLASH) return true;
  return false;
}

/**
 * Scans the value at `i` (whitespace already skipped) like {@link scanValue}, following `path[k..]` into it and
 * recording the range of the value at the end of the path in `found`. Returns the end of the value, or -1.
 */
function walk(b: Uint8Array, i: number, path: readonly (string | 0)[], k: number, found: Found): number {
  if (k === path.length) {
    const fast = found.skip ? found.skip(i) : -1;
    const end = fast >= 0 ? fast : scanValue(b, i);
    if (end >= 0) found.range = { start: i, end };
    return end;
  }
  const step = path[k]!;
  const c = b[i];
  if (c !== (step === 0 ? OPEN_ARRAY : OPEN_OBJECT)) return scanValue(b, i);
  const close = step === 0 ? CLOSE_ARRAY : CLOSE_OBJECT;
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
 *
 * `skip`, when given, is tried first on the value at `path`: it returns the end of that value when it can vouch that
 * the bytes from `start` to there are valid JSON, or -1 to have the scanner check them.
 */
export function findJsonPath(
  b: Uint8Array,
  path: readonly (string | 0)[],
  skip?: (start: number) => number,
): JsonRange | null {
  const found: Found = { range: null, skip };
  const end = walk(b, skipWhitespace(b, 0), path, 0, found);
  if (end < 0 || skipWhitespace(b, end) !== b.length) return null;
  return found.range;
}
