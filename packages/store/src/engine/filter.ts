import { ValidationError } from '@agl/core/errors';
import { snakeToCamel } from '@agl/core/schema';
import type { FilterLogic, PaginatedResult, SortOrder } from '@agl/core/store';

/** Operators of one field (AGL 0.3 `FilterField`). An operator whose value is `null`/`undefined` is skipped. */
export interface FilterField {
  exact?: unknown;
  within?: readonly unknown[] | null;
  contains?: string | null;
}

/**
 * AGL 0.3 `FilterOptions`: every operator of every field is one condition, combined with `logic`; `must` conditions
 * are always ANDed on top. Fix of AGL quirk 1: `or` with zero conditions matches everything (like AGL's Mongo store).
 */
export interface FilterSpec {
  fields?: Record<string, FilterField>;
  logic?: FilterLogic;
  must?: Record<string, FilterField>;
}

const OPERATORS = new Set(['exact', 'within', 'contains']);

type Condition = (item: Record<string, unknown>) => boolean;

function conditionsOf(fields: Record<string, FilterField> | undefined): Condition[] {
  const out: Condition[] = [];
  for (const [field, ops] of Object.entries(fields ?? {})) {
    for (const [op, expected] of Object.entries(ops)) {
      if (!OPERATORS.has(op)) {
        throw new ValidationError(
          `Unknown filter operator "${op}" on field "${field}". Use exact, within or contains.`,
          [{ path: field, message: `unknown operator ${op}` }],
        );
      }
      if (expected === null || expected === undefined) continue;
      if (op === 'exact') out.push((item) => item[field] === expected);
      else if (op === 'within') {
        const set = new Set(expected as readonly unknown[]);
        out.push((item) => set.has(item[field]));
      } else {
        // Case-sensitive substring for strings, membership for arrays (AGL in-memory semantics, quirk 18: copied).
        out.push((item) => {
          const value = item[field];
          if (typeof value === 'string') return value.includes(String(expected));
          if (Array.isArray(value)) return value.includes(expected);
          return false;
        });
      }
    }
  }
  return out;
}

/** True when the filter has no condition at all (every item matches). */
export function isEmptyFilter(spec: FilterSpec): boolean {
  return conditionsOf(spec.fields).length === 0 && conditionsOf(spec.must).length === 0;
}

/** Compiles a filter into a predicate. */
export function compileFilter(spec: FilterSpec): (item: object) => boolean {
  const regular = conditionsOf(spec.fields);
  const must = conditionsOf(spec.must);
  const logic = spec.logic ?? 'and';
  return (obj) => {
    const item = obj as Record<string, unknown>;
    for (const cond of must) if (!cond(item)) return false;
    if (regular.length === 0) return true;
    return logic === 'and' ? regular.every((c) => c(item)) : regular.some((c) => c(item));
  };
}

/**
 * Resolves a sort field given in camelCase or snake_case against the item's fields; an unknown field throws a
 * {@link ValidationError} that lists the valid ones.
 */
export function resolveSortField(sortBy: string, allowed: readonly string[], what: string): string {
  const camel = sortBy.includes('_') ? snakeToCamel(sortBy) : sortBy;
  if (!allowed.includes(camel)) {
    throw new ValidationError(
      `Invalid sort_by: "${sortBy}" is not a field of ${what}. Use one of: ${allowed.join(', ')}.`,
      [{ path: 'sortBy', message: `unknown field ${sortBy}` }],
      { status: 400 },
    );
  }
  return camel;
}

function rank(value: unknown): number {
  if (value === null || value === undefined) return 3;
  if (typeof value === 'number' || typeof value === 'boolean') return 0;
  if (typeof value === 'string') return 1;
  return 2;
}

function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return Number(a) - Number(b);
  if (ra === 1) return (a as string) < (b as string) ? -1 : (a as string) > (b as string) ? 1 : 0;
  if (ra === 2) {
    const ja = JSON.stringify(a);
    const jb = JSON.stringify(b);
    return ja < jb ? -1 : ja > jb ? 1 : 0;
  }
  return 0;
}

/**
 * Stable sort by one field. Nulls sort last in ascending order and first in descending order, for every field
 * (AGL's in-memory store does this only for `*_time` fields; quirk 18, made uniform).
 */
export function sortItems<T extends object>(items: T[], field: string | null, order: SortOrder = 'asc'): T[] {
  if (field === null) return order === 'desc' ? items.reverse() : items;
  const sign = order === 'desc' ? -1 : 1;
  const indexed = items.map((item, index) => ({ item, index }));
  indexed.sort((x, y) => {
    const c = compareValues((x.item as Record<string, unknown>)[field], (y.item as Record<string, unknown>)[field]);
    return c !== 0 ? sign * c : x.index - y.index;
  });
  return indexed.map((x) => x.item);
}

/** Cuts one page; `limit = -1` is unlimited, `0` gives no items; `total` counts every match. */
export function paginate<T>(items: T[], limit: number, offset: number): PaginatedResult<T> {
  const page = limit === -1 ? items.slice(offset) : items.slice(offset, offset + limit);
  return { items: page, total: items.length, limit, offset };
}
