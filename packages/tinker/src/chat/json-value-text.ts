/**
 * Finds the raw text of a top-level member's value in a JSON object's text (`{"name": "f", "arguments": {…}}` →
 * the `{…}` exactly as written), so a parsed tool call keeps the model's own spelling of its arguments. Returns
 * `null` when `text` is not one JSON object or the key is absent. `text` must already have passed `JSON.parse`.
 */
export function jsonMemberText(text: string, key: string): string | null {
  let i = skipSpace(text, 0);
  if (text[i] !== '{') return null;
  i = skipSpace(text, i + 1);
  while (i < text.length && text[i] !== '}') {
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return null;
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') return null;
    const start = skipSpace(text, i + 1);
    const end = valueEnd(text, start);
    if (end < 0) return null;
    if (name === key) return text.slice(start, end);
    i = skipSpace(text, end);
    if (text[i] === ',') i = skipSpace(text, i + 1);
  }
  return null;
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && ' \t\r\n'.includes(text[i] as string)) i++;
  return i;
}

/** End (exclusive) of the JSON string starting at `i`, or -1. */
function stringEnd(text: string, i: number): number {
  if (text[i] !== '"') return -1;
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/** End (exclusive) of the JSON value starting at `i`, or -1. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const ch = text[j];
      if (ch === '"') {
        j = stringEnd(text, j) - 1;
        if (j < 0) return -1;
      } else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < text.length && !',}] \t\r\n'.includes(text[j] as string)) j++;
  return j > i ? j : -1;
}
