import { describe, expect, it } from 'vitest';
import { compileFilter, paginate, resolveSortField, sortItems } from './filter';

const items = [
  { id: 'a1', status: 'failed', n: 2, t: null as number | null },
  { id: 'b2', status: 'queuing', n: 1, t: 5 },
  { id: 'c3', status: 'failed', n: 3, t: 1 },
];

describe('filter engine (checklist #30 at the store level)', () => {
  it('ANDs or ORs conditions, always ANDs must, and skips null operators', () => {
    expect(
      items.filter(compileFilter({ fields: { status: { exact: 'failed' }, id: { contains: 'c' } } })).map((i) => i.id),
    ).toEqual(['c3']);
    expect(
      items
        .filter(compileFilter({ logic: 'or', fields: { status: { exact: 'queuing' }, id: { contains: 'c' } } }))
        .map((i) => i.id),
    ).toEqual(['b2', 'c3']);
    expect(
      items.filter(
        compileFilter({ logic: 'or', fields: { id: { contains: 'a' } }, must: { status: { within: ['queuing'] } } }),
      ),
    ).toEqual([]);
    expect(items.filter(compileFilter({ fields: { status: { exact: null, within: null } } }))).toHaveLength(3);
  });

  it('or-logic with zero conditions matches everything (quirk 1 fixed)', () => {
    expect(items.filter(compileFilter({ logic: 'or', fields: { status: {} } }))).toHaveLength(3);
    expect(items.filter(compileFilter({ logic: 'or' }))).toHaveLength(3);
  });

  it('contains is case-sensitive (quirk 18 kept)', () => {
    expect(items.filter(compileFilter({ fields: { id: { contains: 'A' } } }))).toEqual([]);
  });

  it('an unknown operator is a ValidationError', () => {
    expect(() => compileFilter({ fields: { id: { like: 'a' } as never } })).toThrow(/Unknown filter operator "like"/);
  });

  it('sorts stably with nulls last ascending, first descending', () => {
    expect(sortItems([...items], 't').map((i) => i.id)).toEqual(['c3', 'b2', 'a1']);
    expect(sortItems([...items], 't', 'desc').map((i) => i.id)).toEqual(['a1', 'b2', 'c3']);
    expect(sortItems([...items], 'status').map((i) => i.id)).toEqual(['a1', 'c3', 'b2']);
  });

  it('resolves camelCase and snake_case sort fields and rejects unknown ones', () => {
    expect(resolveSortField('start_time', ['startTime'], 'Rollout')).toBe('startTime');
    expect(resolveSortField('startTime', ['startTime'], 'Rollout')).toBe('startTime');
    expect(() => resolveSortField('nope', ['startTime'], 'Rollout')).toThrow(/Invalid sort_by: "nope".*startTime/);
  });

  it('paginates with total, limit -1 and limit 0', () => {
    expect(paginate([1, 2, 3], -1, 1)).toEqual({ items: [2, 3], total: 3, limit: -1, offset: 1 });
    expect(paginate([1, 2, 3], 0, 0)).toEqual({ items: [], total: 3, limit: 0, offset: 0 });
  });
});
