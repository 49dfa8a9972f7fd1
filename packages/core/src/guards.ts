/**
 * Type guards shared by every package. One definition each: import these instead of writing a local `isObj`.
 * @packageDocumentation
 */

/** A plain JSON-like object: not `null`, not an array. */
export type JsonRecord = Record<string, unknown>;

/** True when `value` is an object that is neither `null` nor an array. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keys that reach `Object.prototype` when assigned to a plain object; never accepted as a user-chosen name. */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** True when `key` would touch an object's prototype chain if used as a property name (`__proto__`, ...). */
export function isForbiddenKey(key: string): boolean {
  return FORBIDDEN_KEYS.has(key);
}

/** Longest id a client may choose or put in a URL path (store ids are about 40 characters). */
export const MAX_ID_LENGTH = 256;

/**
 * Why `id` cannot be a rollout, attempt, resources or worker id, or `null` when it is a plain name: empty, `.` or
 * `..`, longer than {@link MAX_ID_LENGTH} characters, or holding a slash, a backslash or a control character (it
 * would change the meaning of a URL path or a log line).
 */
export function idProblem(id: string): string | null {
  if (id === '' || id === '.' || id === '..') return 'is not an id';
  if (id.length > MAX_ID_LENGTH) return `is longer than ${MAX_ID_LENGTH} characters`;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x20 || c === 0x7f || c === 0x2f || c === 0x5c)
      return 'holds a character ids never have (/, \\ or a control character)';
  }
  return null;
}
