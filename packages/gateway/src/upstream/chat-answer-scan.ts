import { hasBackslash, isAscii, type JsonRange, scanKey, scanValue, skipWhitespace } from './json-scan';
import type { ClientAsked } from './upstream-body';

/** A chat-completions answer read without building it (see {@link scanChatAnswer}). */
export interface ChatAnswerScan {
  /**
   * The answer for the client: the backend's bytes with the extras it did not ask for cut out (the same JSON as
   * `stripResponse` on the parsed body), or the backend's own buffer when there was nothing to cut.
   */
  clientBytes: Uint8Array;
  /** Where the first choice's `logprobs.content` value sits in the backend's bytes (the last duplicate wins); null when absent. */
  logprobsContent: JsonRange | null;
}

const QUOTE = 0x22;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** Output: byte ranges of the backend's answer and short ASCII literals, joined once at the end. */
type Piece = JsonRange | string;

interface Scan {
  b: Uint8Array;
  asked: ClientAsked;
  skip: ((start: number) => number) | undefined;
  pieces: Piece[];
  /** True once something was cut or replaced. */
  changed: boolean;
  content: JsonRange | null;
}

/** A member's key, between `start` (after the opening quote) and `end` (the closing quote), is the ASCII `name`. */
const keyIs = (b: Uint8Array, start: number, end: number, name: string): boolean =>
  end - start === name.length && isAscii(b, start, name);

/**
 * Walks the members of the object at `i` (a `{`). `member` gets a member whose key is plain ASCII (an escaped key
 * makes the whole scan give up), with the key's first character and its closing quote, and returns the end of the
 * value, or -1. Returns the end of the object, or -1.
 */
function forEachMember(
  b: Uint8Array,
  i: number,
  member: (keyStart: number, keyEnd: number, valueStart: number) => number,
): number {
  i = skipWhitespace(b, i + 1);
  if (b[i] === CLOSE_OBJECT) return i + 1;
  for (;;) {
    const valueStart = scanKey(b, i);
    if (valueStart < 0) return -1;
    const keyEnd = b.lastIndexOf(QUOTE, valueStart - 1);
    if (hasBackslash(b, i + 1, keyEnd) || (i = member(i + 1, keyEnd, valueStart)) < 0) return -1;
    i = skipWhitespace(b, i);
    if (b[i] === CLOSE_OBJECT) return i + 1;
    if (b[i] !== COMMA) return -1;
    i = skipWhitespace(b, i + 1);
  }
}

/**
 * Copies the object at `i` to the output, member by member through `member`, which pushes what it keeps (the member
 * from its opening quote, `keyStart - 1`) after a comma when `comma` says one is due. Returns the object's end, or -1.
 */
function rewriteObject(
  s: Scan,
  i: number,
  member: (keyStart: number, keyEnd: number, valueStart: number, comma: boolean) => number,
): number {
  s.pieces.push('{');
  const first = s.pieces.length;
  const end = forEachMember(s.b, i, (keyStart, keyEnd, valueStart) =>
    member(keyStart, keyEnd, valueStart, s.pieces.length > first),
  );
  s.pieces.push('}');
  return end;
}

/** Copies one member as it is; returns the end of its value. */
function keep(s: Scan, keyStart: number, valueStart: number, comma: boolean): number {
  const end = scanValue(s.b, valueStart);
  if (end < 0) return -1;
  if (comma) s.pieces.push(',');
  s.pieces.push({ start: keyStart - 1, end });
  return end;
}

/** Leaves one member out; returns the end of its value. */
function drop(s: Scan, valueStart: number): number {
  s.changed = true;
  return scanValue(s.b, valueStart);
}

/** The `logprobs` object of the first choice: finds its `content` value (the last duplicate wins). */
function scanLogprobs(s: Scan, i: number): number {
  const b = s.b;
  if (b[i] !== OPEN_OBJECT) return scanValue(b, i);
  return forEachMember(b, i, (keyStart, keyEnd, valueStart) => {
    if (!keyIs(b, keyStart, keyEnd, 'content')) return scanValue(b, valueStart);
    const fast = s.skip ? s.skip(valueStart) : -1;
    const end = fast >= 0 ? fast : scanValue(b, valueStart);
    if (end >= 0) s.content = { start: valueStart, end };
    return end;
  });
}

/** One choice: token ids cut and `logprobs` replaced by `null` unless the client asked for them. */
function scanChoice(s: Scan, i: number, first: boolean): number {
  const b = s.b;
  return rewriteObject(s, i, (keyStart, keyEnd, valueStart, comma) => {
    if (
      !s.asked.tokenIds &&
      (keyIs(b, keyStart, keyEnd, 'token_ids') || keyIs(b, keyStart, keyEnd, 'prompt_token_ids'))
    )
      return drop(s, valueStart);
    if (!keyIs(b, keyStart, keyEnd, 'logprobs')) return keep(s, keyStart, valueStart, comma);
    if (first) s.content = null;
    const end = first ? scanLogprobs(s, valueStart) : scanValue(b, valueStart);
    if (end < 0) return -1;
    if (comma) s.pieces.push(',');
    if (s.asked.logprobs) s.pieces.push({ start: keyStart - 1, end });
    else {
      s.pieces.push({ start: keyStart - 1, end: valueStart }, 'null');
      s.changed = true;
    }
    return end;
  });
}

/** The `choices` array: each object element goes through {@link scanChoice}, anything else is copied. */
function scanChoices(s: Scan, i: number): number {
  const b = s.b;
  s.pieces.push('[');
  i = skipWhitespace(b, i + 1);
  if (b[i] === CLOSE_ARRAY) {
    s.pieces.push(']');
    return i + 1;
  }
  for (let index = 0; ; index += 1) {
    if (index > 0) s.pieces.push(',');
    let end: number;
    if (b[i] === OPEN_OBJECT) end = scanChoice(s, i, index === 0);
    else if ((end = scanValue(b, i)) >= 0) s.pieces.push({ start: i, end });
    if (end < 0) return -1;
    i = skipWhitespace(b, end);
    if (b[i] === CLOSE_ARRAY) {
      s.pieces.push(']');
      return i + 1;
    }
    if (b[i] !== COMMA) return -1;
    i = skipWhitespace(b, i + 1);
  }
}

/**
 * Reads a chat-completions answer in one pass over its bytes, without decoding or building it: checks that it is one
 * valid JSON object, cuts out the extras the client did not ask for (`prompt_token_ids` and `prompt_logprobs` at the
 * top, each choice's `token_ids` and `prompt_token_ids`; each choice's `logprobs` becomes `null`), and notes where the
 * first choice's `logprobs.content` list is. The gateway answers the client from this and parses the answer for the
 * span afterwards. `skip` is tried first on that list, as in `findJsonPath`.
 *
 * Returns `null` when the bytes are not a valid JSON object or a member key on the way is escaped; the caller then
 * parses the answer as usual (and reports invalid JSON from there).
 */
export function scanChatAnswer(
  bytes: Uint8Array,
  asked: ClientAsked,
  skip?: (start: number) => number,
): ChatAnswerScan | null {
  const s: Scan = { b: bytes, asked, skip, pieces: [], changed: false, content: null };
  const start = skipWhitespace(bytes, 0);
  if (bytes[start] !== OPEN_OBJECT) return null;
  const end = rewriteObject(s, start, (keyStart, keyEnd, valueStart, comma) => {
    if (
      !asked.tokenIds &&
      (keyIs(bytes, keyStart, keyEnd, 'prompt_token_ids') || keyIs(bytes, keyStart, keyEnd, 'prompt_logprobs'))
    )
      return drop(s, valueStart);
    if (!keyIs(bytes, keyStart, keyEnd, 'choices')) return keep(s, keyStart, valueStart, comma);
    s.content = null;
    if (bytes[valueStart] !== OPEN_ARRAY) return keep(s, keyStart, valueStart, comma);
    if (comma) s.pieces.push(',');
    s.pieces.push({ start: keyStart - 1, end: valueStart });
    return scanChoices(s, valueStart);
  });
  if (end < 0 || skipWhitespace(bytes, end) !== bytes.length) return null;
  return { clientBytes: s.changed ? join(bytes, s.pieces) : bytes, logprobsContent: s.content };
}

/** The output pieces as one buffer. */
function join(b: Uint8Array, pieces: readonly Piece[]): Buffer {
  let length = 0;
  for (const p of pieces) length += typeof p === 'string' ? p.length : p.end - p.start;
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (const p of pieces) {
    if (typeof p === 'string') at += out.write(p, at, 'latin1');
    else {
      out.set(b.subarray(p.start, p.end), at);
      at += p.end - p.start;
    }
  }
  return out;
}
