import { join } from 'node:path';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { useTempDirs } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { openStore } from './open-store';

describe('openStore: where a given store instance keeps its data', () => {
  const dirs = useTempDirs();

  it('a SQLite file by its capability, nothing for :memory: or a memory store', async () => {
    const path = join(await dirs.make('agl-open-store-'), 'given.sqlite');
    const file = new SqliteStore({ path });
    const memory = new SqliteStore({ path: ':memory:' });
    try {
      expect((await openStore({ store: file })).location).toBe(path);
      expect((await openStore({ store: memory })).location).toBeNull();
      expect((await openStore({ store: new MemoryStore() })).location).toBeNull();
    } finally {
      await file.close();
      await memory.close();
    }
  });
});
