import { isRecord, type JsonRecord } from '@agl/core/guards';
import { findJsonPath } from '@agl/core/internal/json-scan';

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

/**
 * Parses a chat-completions answer. With `logprobsAsText`, the first choice's `logprobs.content` list (on training
 * calls most of the answer: one object per token) is located with a strict byte scanner (`findJsonPath`) and kept as
 * JSON text for the span, so it is neither built into objects nor serialised again; the rest is parsed as usual.
 * Anything unexpected (no such list, invalid JSON, escaped keys) falls back to one plain `JSON.parse` of the whole
 * body, whose error is what the caller sees.
 *
 * @throws SyntaxError for invalid JSON, or an `Error` when the answer is not a JSON object.
 */
export function parseUpstreamJson(bytes: Uint8Array, logprobsAsText: boolean): UpstreamJson {
  const text = decodeBody(bytes);
  if (logprobsAsText) {
    const aligned = text.length === bytes.length;
    const range = findJsonPath(bytes, LOGPROBS_CONTENT);
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
