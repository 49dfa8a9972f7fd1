/** Deepest JSON nesting (objects and arrays) the store server and the gateway accept in a request body. */
export const MAX_JSON_DEPTH = 256;

/**
 * The nesting depth of a JSON text, counted without parsing (brackets inside strings are skipped), so a hostile body
 * such as 100,000 nested arrays is refused before recursive validation could overflow the stack. Strings, most of a
 * typical body, are skipped with `indexOf` rather than character by character.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i + 1);
      if (i < 0) return max;
    } else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
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
 * Index just past the object or array that opens at `open` (`{` or `[`), skipping strings; -1 when it never closes or
 * its brackets do not pair up. Only the brackets are checked, not the JSON inside.
 */
export function containerEnd(text: string, open: number): number {
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
