import type { IncomingMessage } from 'node:http';
import { ValidationError } from '@agl/core/errors';
import { isRecord, type JsonRecord } from '@agl/core/guards';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '@agl/core/internal/json-scan';
import { MAX_JSON_DEPTH } from '@agl/core/schema';
import { RequestRefusedError } from './call-errors';

/**
 * What a request body may weigh. Bytes, nesting and the number of JSON values are counted while the body arrives, so
 * a body past a limit is answered (413 or 400) at once, without being buffered to the end or parsed.
 */
export interface BodyLimits {
  /** Largest body in bytes (413 past it). */
  maxBytes: number;
  /** Deepest nesting of objects and arrays (400 past it). */
  maxDepth: number;
  /** Most JSON values, object keys included: every string, number, literal, object and array counts one (413 past it). */
  maxValues: number;
}

/**
 * Structural limits of an LLM call's body (the byte limit is `GatewayOptions.maxBodyBytes`, default 32 MiB). Half a
 * million values is far beyond a real request (a 128,000-token prompt sent as token ids is 128,000 values); the
 * heaviest body within the limits (32 MiB, 500,000 values) takes about 0.35 s of CPU to parse. `JSON.parse` of the
 * 32 MiB `{"junk":[{},{},...]}` (11 million values) took 8 s and 1.1 GB before this limit.
 */
export const LLM_BODY_LIMITS: Omit<BodyLimits, 'maxBytes'> = { maxDepth: MAX_JSON_DEPTH, maxValues: 200_000 };

/** Limits of the control routes (`POST /proxy/pause`): a few small fields. */
export const CONTROL_BODY_LIMITS: BodyLimits = { maxBytes: 16 * 1024, maxDepth: 8, maxValues: 256 };

const SCALAR = 1;
const STRING = 2;
const OPEN = 3;
const CLOSE = 4;
/** Byte classes outside strings: anything that is not whitespace, `,`, `:`, a quote or a bracket belongs to a scalar. */
const CLASS = new Uint8Array(256).fill(SCALAR);
for (const c of ' \t\r\n,:') CLASS[c.charCodeAt(0)] = 0;
CLASS[QUOTE] = STRING;
CLASS[OPEN_BRACE] = OPEN;
CLASS[OPEN_BRACKET] = OPEN;
CLASS[CLOSE_BRACE] = CLOSE;
CLASS[CLOSE_BRACKET] = CLOSE;

/**
 * Counts the nesting and values of a JSON text fed in chunks, without building anything (strings are skipped with
 * `indexOf`; structure costs a few ns a byte).
 * Only structure is followed: whether the text is valid JSON is left to `JSON.parse`.
 */
export class JsonShapeMeter {
  readonly #limits: BodyLimits;
  #inString = false;
  #escaped = false;
  #inScalar = false;
  #depth = 0;
  #values = 0;

  constructor(limits: BodyLimits) {
    this.#limits = limits;
  }

  /** Feeds the next bytes; returns the error to answer with as soon as a limit is passed, else `null`. */
  push(chunk: Uint8Array): RequestRefusedError | ValidationError | null {
    const { maxDepth, maxValues } = this.#limits;
    let inString = this.#inString;
    let escaped = this.#escaped;
    let inScalar = this.#inScalar;
    let depth = this.#depth;
    let values = this.#values;
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      if (inString) {
        // Jump to the next quote; it ends the string unless an odd run of backslashes (from `i` on) precedes it.
        if (escaped) {
          escaped = false;
          continue;
        }
        const q = chunk.indexOf(QUOTE, i);
        const end = q < 0 ? n : q;
        let run = 0;
        while (end - run - 1 >= i && chunk[end - run - 1] === BACKSLASH) run++;
        if (q < 0) {
          escaped = run % 2 === 1;
          break;
        }
        if (run % 2 === 0) inString = false;
        i = q;
        continue;
      }
      const c = CLASS[chunk[i]!]!;
      if (c === SCALAR) {
        if (inScalar) continue;
        inScalar = true;
      } else {
        inScalar = false;
        if (c === 0) continue;
        if (c === CLOSE) {
          depth--;
          continue;
        }
        if (c === STRING) inString = true;
        else if (++depth > maxDepth) return tooDeep(maxDepth);
      }
      if (++values > maxValues) return tooManyValues(maxValues);
    }
    this.#inString = inString;
    this.#escaped = escaped;
    this.#inScalar = inScalar;
    this.#depth = depth;
    this.#values = values;
    return null;
  }
}

function tooDeep(limit: number): ValidationError {
  return new ValidationError(
    `Request body is nested more than ${limit} levels deep; the limit is ${limit}. Send flatter JSON.`,
    [{ path: '', message: 'nested too deeply' }],
    {
      status: 400,
    },
  );
}

function tooManyValues(limit: number): RequestRefusedError {
  return new RequestRefusedError(
    413,
    'request_too_large',
    `Request body holds more than ${limit.toLocaleString('en-US')} JSON values (strings, numbers, keys, objects, arrays); the gateway refuses it. Send a smaller request.`,
  );
}

function tooLarge(limit: number): RequestRefusedError {
  return new RequestRefusedError(
    413,
    'request_too_large',
    `Request body is larger than ${limit} bytes. Send a smaller request or raise the gateway's maxBodyBytes.`,
  );
}

/** Bodies above this size are handed on in a later event-loop turn than the one that parsed them. */
const YIELD_AFTER_BYTES = 1024 * 1024;

const invalid = (message: string, issue: string): ValidationError =>
  new ValidationError(message, [{ path: '', message: issue }], { status: 400 });

/**
 * Reads a request body within `limits` and parses it as a JSON object. Refuses at once (without reading further) a
 * declared or actual size, a nesting depth or a value count past the limits. An empty body gives `null`.
 */
export function readJsonBody(req: IncomingMessage, limits: BodyLimits): Promise<JsonRecord | null> {
  const declared = Number(req.headers['content-length']);
  if (declared > limits.maxBytes) {
    req.resume();
    return Promise.reject(tooLarge(limits.maxBytes));
  }
  return new Promise<JsonRecord | null>((resolve, reject) => {
    // Decoded chunk by chunk as it arrives, so a large body is not copied and decoded in one piece at its end.
    const decoder = new TextDecoder();
    const parts: string[] = [];
    const meter = new JsonShapeMeter(limits);
    let size = 0;
    const refuse = (err: Error): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.resume();
      reject(err);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      const err = size > limits.maxBytes ? tooLarge(limits.maxBytes) : meter.push(chunk);
      if (err !== null) return refuse(err);
      parts.push(decoder.decode(chunk, { stream: true }));
    };
    const onEnd = (): void => {
      let value: JsonRecord | null;
      try {
        parts.push(decoder.decode());
        value = parseJsonObject(parts.join(''));
      } catch (err) {
        return reject(err as Error);
      }
      // After parsing a large body, let other requests in before the call goes on (planning, serialising it upstream).
      if (size > YIELD_AFTER_BYTES) setImmediate(() => resolve(value));
      else resolve(value);
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
    req.once('close', () => {
      if (!req.complete)
        reject(invalid('The client closed the connection before the request body was complete.', 'aborted'));
    });
  });
}

/** Parses a body already metered by {@link readJsonBody}; `null` for an empty one. */
function parseJsonObject(text: string): JsonRecord | null {
  if (text.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw invalid(`Request body is not valid JSON (${(err as Error).message}); send a JSON object.`, 'invalid JSON');
  }
  if (!isRecord(value))
    throw invalid(
      `Request body must be a JSON object, got ${Array.isArray(value) ? 'an array' : typeof value}.`,
      'not an object',
    );
  return value;
}

/** The error for an LLM call without a body. */
export const emptyBody = (): ValidationError =>
  invalid('Request body is empty; send a JSON object (Content-Type: application/json).', 'empty body');
