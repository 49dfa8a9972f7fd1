import { isRecord, type JsonRecord } from '@agl/core/guards';
import { findJsonPath, type JsonRange } from './json-scan';
import { logprobsListEnd } from './logprobs-list';

/** A backend's JSON answer, parsed. */
export interface UpstreamJson {
  body: JsonRecord;
  /**
   * The first choice's `logprobs.content` list exactly as the backend wrote it, when it was taken out of the body
   * unparsed (the parsed `body` then has `null` in its place); otherwise `null`.
   */
  logprobsContentJson: string | null;
}

const LOGPROBS_CONTENT = ['choices', 0, 'logprobs', 'content'] as const;

const asBuffer = (bytes: Uint8Array): Buffer =>
  Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** A body as text, decoded as undici's `body.text()` does (UTF-8, a leading byte-order mark dropped). */
export function decodeBody(bytes: Uint8Array): string {
  const start = bytes.length > 2 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  return asBuffer(bytes).toString('utf8', start);
}

/** What a scan of the answer (`scanChatAnswer`) already found, so {@link parseUpstreamJson} need not look again. */
export interface ScannedAnswer {
  /** The answer decoded by {@link decodeBody}. */
  text: string;
  /** Where the first choice's `logprobs.content` list sits in the bytes, or null. */
  logprobsContent: JsonRange | null;
}

/**
 * The fast check for a `logprobs.content` list (`logprobsListEnd`, on the text) for `findJsonPath`'s `skip`, when the
 * answer is one byte per character so positions in the text are positions in the bytes; otherwise `undefined`.
 */
export function logprobsListSkip(bytes: Uint8Array, text: string): ((start: number) => number) | undefined {
  return text.length === bytes.length ? (at) => logprobsListEnd(text, at) : undefined;
}

/**
 * Parses a chat-completions answer. With `logprobsAsText`, the first choice's `logprobs.content` list (on training
 * calls most of the answer: one object per token) is located with a strict scanner and kept as JSON text for the span,
 * so it is neither built into objects nor serialised again; the rest is parsed as usual. When the answer is one byte
 * per character (plain ASCII, as backends write JSON by default), positions in the text are positions in the bytes and
 * the list is first matched on the text by `logprobsListEnd`, four times faster than the byte scanner. Anything
 * unexpected (no such list, invalid JSON, escaped keys) falls back to one plain `JSON.parse` of the whole body, whose
 * error is what the caller sees. `scanned`: the text and the list's range, when a scan of the answer already has them.
 *
 * @throws SyntaxError for invalid JSON, or an `Error` when the answer is not a JSON object.
 */
export function parseUpstreamJson(bytes: Uint8Array, logprobsAsText: boolean, scanned?: ScannedAnswer): UpstreamJson {
  const text = scanned?.text ?? decodeBody(bytes);
  if (logprobsAsText) {
    const aligned = text.length === bytes.length;
    const range = scanned
      ? scanned.logprobsContent
      : findJsonPath(bytes, LOGPROBS_CONTENT, logprobsListSkip(bytes, text));
    if (range !== null && bytes[range.start] === 0x5b) {
      const buffer = asBuffer(bytes);
      const head = aligned ? text.slice(0, range.start) : buffer.toString('utf8', 0, range.start);
      const tail = aligned ? text.slice(range.end) : buffer.toString('utf8', range.end);
      let rest: unknown;
      try {
        rest = JSON.parse(`${head}null${tail}`);
      } catch {
        rest = undefined;
      }
      // Decoded on its own rather than sliced from `text`: the span keeps this string, and a slice would keep the
      // whole answer alive with it.
      if (isRecord(rest)) return { body: rest, logprobsContentJson: buffer.toString('utf8', range.start, range.end) };
    }
  }
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed)) throw new Error('not a JSON object');
  return { body: parsed, logprobsContentJson: null };
}
