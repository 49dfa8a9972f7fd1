import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreConformance } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { SqliteStore } from './index';

describeStoreConformance('SqliteStore', ({ clock, scanDebounceSeconds }) => {
  const dir = mkdtempSync(join(tmpdir(), 'agl-sqlite-'));
  return {
    store: new SqliteStore({ path: join(dir, 'store.sqlite'), clock, scanDebounceSeconds }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
});

describe('SqliteStore capabilities', () => {
  it('names its file as sqliteFile, so runner threads can open it, and none for :memory:', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-sqlite-cap-'));
    const path = join(dir, 'store.sqlite');
    const file = new SqliteStore({ path });
    const memory = new SqliteStore({ path: ':memory:' });
    try {
      expect(file.capabilities.sqliteFile).toBe(path);
      expect(memory.capabilities.sqliteFile).toBeUndefined();
    } finally {
      await file.close();
      await memory.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
