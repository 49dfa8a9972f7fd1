/**
 * An empty object already in V8's dictionary mode, for records that get many keys of their own (span attributes).
 * Adding keys to a plain `{}` builds one hidden class per new key; with the unique keys of real attribute maps that
 * cost ~15× more than filling a dictionary. The result is an ordinary object (prototype `Object.prototype`).
 */
export function emptyRecord<T = unknown>(): Record<string, T> {
  const out: Record<string, T> = { a: undefined as T, b: undefined as T };
  delete out.a;
  delete out.b;
  return out;
}
