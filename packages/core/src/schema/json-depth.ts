/** Deepest JSON nesting (objects and arrays) the store server and the gateway accept in a request body. */
export const MAX_JSON_DEPTH = 256;

/**
 * The nesting depth of a JSON text, counted without parsing (brackets inside strings are skipped), so a hostile body
 * such as 100,000 nested arrays is refused before recursive validation could overflow the stack.
 */
export function jsonDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) max = Math.max(max, ++depth);
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}
