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
