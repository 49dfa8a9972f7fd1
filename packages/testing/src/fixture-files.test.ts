import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJsonFixture, updatingFixtures, writeJsonFixture } from './fixture-files';

describe('expected-output fixtures', () => {
  let dir: string;
  const saved = process.env.AGL_UPDATE_FIXTURES;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agl-fixtures-'));
    delete process.env.AGL_UPDATE_FIXTURES;
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.AGL_UPDATE_FIXTURES;
    else process.env.AGL_UPDATE_FIXTURES = saved;
  });

  it('a plain run never writes one, and a missing one fails with how to generate it', () => {
    const path = join(dir, 'expected.json');
    expect(updatingFixtures()).toBe(false);
    expect(() => writeJsonFixture(path, { a: 1 })).toThrow(/set AGL_UPDATE_FIXTURES=1/);
    expect(existsSync(path)).toBe(false);
    expect(() => readJsonFixture(path)).toThrow(/expected\.json is missing\. Generate it with AGL_UPDATE_FIXTURES=1/);
  });

  it('AGL_UPDATE_FIXTURES=1 writes it (2-space JSON, final newline), and it reads back', () => {
    process.env.AGL_UPDATE_FIXTURES = '1';
    const path = join(dir, 'nested', 'expected.json');
    writeJsonFixture(path, { a: [1, 2] });
    expect(readFileSync(path, 'utf8')).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}\n');
    expect(readJsonFixture(path)).toEqual({ a: [1, 2] });
  });
});
