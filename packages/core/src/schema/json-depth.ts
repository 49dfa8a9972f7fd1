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
