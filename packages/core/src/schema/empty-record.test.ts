import { describe, expect, it } from 'vitest';
import { emptyRecord } from './empty-record';

describe('emptyRecord', () => {
  it('is an ordinary empty object that keeps keys in insertion order (integer keys first, as for any object)', () => {
    const record = emptyRecord<number>();
    expect(Object.getPrototypeOf(record)).toBe(Object.prototype);
    expect(Object.keys(record)).toEqual([]);
    expect(JSON.stringify(record)).toBe('{}');
    for (const key of ['zeta', 'alpha', '10', 'mid.key', '2']) record[key] = key.length;
    expect(Object.keys(record)).toEqual(['2', '10', 'zeta', 'alpha', 'mid.key']);
    expect(record).toEqual({ zeta: 4, alpha: 5, 10: 2, 'mid.key': 7, 2: 1 });
    expect(emptyRecord()).not.toBe(emptyRecord());
  });
});
