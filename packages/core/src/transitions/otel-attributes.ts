import { ValidationError } from '../errors/index';
import { isRecord } from '../guards';
import { emptyRecord, type AttributeValue, type Attributes } from '../schema/index';

/** A primitive attribute value. */
type Primitive = string | number | boolean;

function primitiveKind(value: unknown): 'string' | 'boolean' | 'int' | 'float' | null {
  if (typeof value === 'string') return 'string';
  if (typeof value === 'boolean') return 'boolean';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  return null;
}

function isHomogeneousPrimitiveList(list: readonly unknown[]): boolean {
  if (list.length === 0) return false;
  const first = primitiveKind(list[0]);
  if (first === null) return false;
  return list.every((item) => {
    const kind = primitiveKind(item);
    // ints and floats are both JS numbers; treat them as one numeric type.
    return kind === first || (first !== 'string' && first !== 'boolean' && (kind === 'int' || kind === 'float'));
  });
}

/**
 * Flattens a nested value into dotted attribute keys (AGL 0.3 `flatten_attributes`, reference §4.7). Object keys are
 * joined with `.`, list items get `.{index}`. With `expandLeafLists: false` (the emitter default) a non-empty list of
 * one primitive type stays an array value.
 */
export function flattenAttributes(
  value: unknown,
  options: { prefix?: string; expandLeafLists?: boolean } = {},
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const expand = options.expandLeafLists ?? false;
  const walk = (node: unknown, key: string): void => {
    if (Array.isArray(node)) {
      if (!expand && isHomogeneousPrimitiveList(node)) {
        out[key] = node;
        return;
      }
      if (node.length === 0) {
        if (key) out[key] = [];
        return;
      }
      node.forEach((item, i) => walk(item, key ? `${key}.${i}` : String(i)));
      return;
    }
    if (node !== null && typeof node === 'object' && !(node instanceof Date)) {
      const entries = Object.entries(node as Record<string, unknown>);
      if (entries.length === 0 && key) {
        out[key] = {};
        return;
      }
      for (const [k, v] of entries) walk(v, key ? `${key}.${k}` : k);
      return;
    }
    if (!key) throw new ValidationError('flattenAttributes needs an object, a list, or a prefix for a scalar value');
    out[key] = node;
  };
  walk(value, options.prefix ?? '');
  return out;
}

/** Turns any value into a valid OTel attribute value (AGL 0.3 `sanitize_attribute_value`). */
export function sanitizeAttributeValue(value: unknown): Primitive | Primitive[] {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (Array.isArray(value)) {
    if (value.every((v) => typeof v === 'string')) return value as string[];
    if (value.every((v) => typeof v === 'boolean')) return value as boolean[];
    if (value.every((v) => typeof v === 'number' || typeof v === 'boolean')) {
      return value.map((v) => (typeof v === 'boolean' ? (v ? 1 : 0) : (v as number)));
    }
    return safeJson(value);
  }
  return safeJson(value);
}

function safeJson(value: unknown): string {
  if (value === undefined) return 'null';
  try {
    return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null';
  } catch {
    return String(value);
  }
}

/** Flattens then sanitises: what the emitters put on spans. */
export function toSpanAttributes(value: unknown, prefix?: string): Record<string, Primitive | Primitive[]> {
  const flat = flattenAttributes(value, prefix === undefined ? {} : { prefix });
  const out: Record<string, Primitive | Primitive[]> = {};
  for (const [k, v] of Object.entries(flat)) out[k] = sanitizeAttributeValue(v);
  return out;
}

/** A nested value rebuilt by {@link unflattenAttributes}. */
export type Unflattened = unknown;

/**
 * Rebuilds the nested value from dotted keys (AGL 0.3 `unflatten_attributes`): a node whose keys are exactly
 * `"0".."n-1"` becomes a list.
 */
export function unflattenAttributes(attributes: Readonly<Record<string, unknown>>): Unflattened {
  const root: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(attributes)) {
    const parts = key.split('.');
    let node: Record<string, unknown> = root;
    for (let i = 0; i < parts.length - 1; i += 1) {
      const part = parts[i] as string;
      const next = node[part];
      if (next === null || typeof next !== 'object' || Array.isArray(next)) {
        const created: Record<string, unknown> = {};
        // A scalar at an intermediate key keeps its value under "" so nothing is lost.
        if (next !== undefined) created[''] = next;
        node[part] = created;
        node = created;
      } else {
        node = next as Record<string, unknown>;
      }
    }
    const last = parts[parts.length - 1] as string;
    const existing = node[last];
    if (isRecord(existing)) {
      existing[''] = value;
    } else {
      node[last] = value;
    }
  }
  return listify(root);
}

function listify(node: unknown): unknown {
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return node;
  const obj = node as Record<string, unknown>;
  const keys = Object.keys(obj);
  for (const k of keys) obj[k] = listify(obj[k]);
  if (keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    const sorted = keys.map(Number).sort((a, b) => a - b);
    if (sorted.every((n, i) => n === i)) return sorted.map((n) => obj[String(n)]);
  }
  return obj;
}

/**
 * The attributes equal to `prefix` or under `prefix.`, prefix stripped, unflattened (AGL 0.3
 * `filter_and_unflatten_attributes`). Returns `undefined` when none match. A key exactly equal to the prefix is
 * returned as the value itself when it is the only match.
 */
export function filterAndUnflatten(attributes: Readonly<Record<string, unknown>>, prefix: string): unknown {
  const sub: Record<string, unknown> = {};
  let exact: unknown;
  let hasExact = false;
  let any = false;
  const dotted = `${prefix}.`;
  for (const [key, value] of Object.entries(attributes)) {
    if (key === prefix) {
      exact = value;
      hasExact = true;
    } else if (key.startsWith(dotted)) {
      sub[key.slice(dotted.length)] = value;
      any = true;
    }
  }
  if (!any) return hasExact ? exact : undefined;
  return unflattenAttributes(sub);
}

/** True when some key equals `prefix` or starts with `prefix.`. */
export function hasPrefix(attributes: Readonly<Record<string, unknown>>, prefix: string): boolean {
  const dotted = `${prefix}.`;
  return Object.keys(attributes).some((k) => k === prefix || k.startsWith(dotted));
}

/** Narrows an attribute map to the schema's `Attributes` type (drops `undefined`). */
export function cleanAttributes(attributes: Readonly<Record<string, unknown>>): Attributes {
  const out = emptyRecord<AttributeValue>();
  for (const k of Object.keys(attributes)) {
    const v = attributes[k];
    if (v !== undefined) out[k] = v as AttributeValue;
  }
  return out;
}
