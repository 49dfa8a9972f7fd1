/**
 * Id generation, AGL 0.3 style: a prefix and lowercase hex. Uses Web Crypto only, so it runs in a browser too. Random
 * bytes come from a pool refilled 4 KiB at a time: one `getRandomValues` call serves about 400 ids, which matters on a
 * recorded service's request path (Node 20's `getRandomValues` costs microseconds a call).
 */
const POOL_BYTES = 4096;
let pool = new Uint8Array(0);
let poolOffset = 0;
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

function randomHex(length: number): string {
  const count = Math.ceil(length / 2);
  if (poolOffset + count > pool.length) {
    pool = new Uint8Array(POOL_BYTES);
    globalThis.crypto.getRandomValues(pool);
    poolOffset = 0;
  }
  let out = '';
  for (let i = poolOffset; i < poolOffset + count; i += 1) out += HEX[pool[i]!];
  poolOffset += count;
  return out.length === length ? out : out.slice(0, length);
}

/** A new rollout id: `ro-` and 12 hex digits. */
export const newRolloutId = (): string => `ro-${randomHex(12)}`;
/** A new attempt id: `at-` and 8 hex digits. */
export const newAttemptId = (): string => `at-${randomHex(8)}`;
/** A new resources id: `rs-` and 12 hex digits. */
export const newResourcesId = (): string => `rs-${randomHex(12)}`;
/** A new OpenTelemetry trace id: 32 hex digits. */
export const newTraceId = (): string => randomHex(32);
/** A new OpenTelemetry span id: 16 hex digits. */
export const newSpanId = (): string => randomHex(16);
