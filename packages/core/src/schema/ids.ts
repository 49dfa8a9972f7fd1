/**
 * Id generation, AGL 0.3 style: a prefix and lowercase hex. Uses Web Crypto only, so it runs in a browser too.
 */
function randomHex(length: number): string {
  const bytes = new Uint8Array(Math.ceil(length / 2));
  globalThis.crypto.getRandomValues(bytes);
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out.slice(0, length);
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
