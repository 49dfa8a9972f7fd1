import { describe, expect, it } from 'vitest';
import { isForbiddenKey, isRecord } from './guards';

describe('guards', () => {
  it('isRecord accepts objects only', () => {
    expect(isRecord({})).toBe(true);
    expect(isRecord(Object.create(null))).toBe(true);
    for (const value of [null, undefined, [], 'x', 1, true]) expect(isRecord(value)).toBe(false);
  });
  it('isForbiddenKey names prototype keys', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) expect(isForbiddenKey(key)).toBe(true);
    expect(isForbiddenKey('main_llm')).toBe(false);
  });
});
