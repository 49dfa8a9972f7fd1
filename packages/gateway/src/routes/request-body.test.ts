import { describe, expect, it } from 'vitest';
import { JsonShapeMeter } from './request-body';

const limits = { maxBytes: 1 << 20, maxDepth: 3, maxValues: 6 };

/** Feeds `text` one byte at a time (every chunk boundary) and whole; both must agree. */
function meter(text: string): string | null {
  const bytes = Buffer.from(text);
  const whole = new JsonShapeMeter(limits).push(bytes)?.message ?? null;
  const split = new JsonShapeMeter(limits);
  let byByte: string | null = null;
  for (let i = 0; i < bytes.length && byByte === null; i++)
    byByte = split.push(bytes.subarray(i, i + 1))?.message ?? null;
  expect(byByte).toBe(whole);
  return whole;
}

describe('JsonShapeMeter', () => {
  it('counts values and keys, not the brackets, quotes or escapes inside strings', () => {
    expect(meter('{"a":[1,true,"x"]}')).toBeNull(); // object, key, array, 1, true, "x"
    expect(meter('{"a":[1,true,"x",null]}')).toContain('more than 6 JSON values');
    expect(meter('{"a":"[[[[{{{{\\"]]]]\\\\"}')).toBeNull();
    expect(meter('["\\\\",[[[]]]]')).toContain('nested more than 3 levels');
    expect(meter('["\\"[[[[",1]')).toBeNull();
  });

  it('counts a number or literal once however long', () => {
    expect(meter(`[${'9'.repeat(1000)}, -1.5e+10, false, null]`)).toBeNull();
  });
});
