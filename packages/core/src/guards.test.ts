import { describe, expect, it } from 'vitest';
import { isForbiddenKey, isRecord, idProblem } from './guards';

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

describe('idProblem', () => {
  it('accepts plain ids and names what is wrong with odd ones', () => {
    expect(idProblem('ro-1a2b')).toBeNull();
    expect(idProblem('x'.repeat(256))).toBeNull();
    expect(idProblem('')).toBe('is not an id');
    expect(idProblem('..')).toBe('is not an id');
    expect(idProblem('x'.repeat(257))).toMatch(/longer than 256/);
    for (const id of ['a/b', 'a\\b', 'a\nb', 'a\u007fb']) expect(idProblem(id)).toMatch(/never have/);
  });
});
