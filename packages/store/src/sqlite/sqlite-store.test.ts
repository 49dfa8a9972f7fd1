import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreConformance } from '@agl/testing';
import { SqliteStore } from './index';

describeStoreConformance('SqliteStore', ({ clock, scanDebounceSeconds }) => {
  const dir = mkdtempSync(join(tmpdir(), 'agl-sqlite-'));
  return {
    store: new SqliteStore({ path: join(dir, 'store.sqlite'), clock, scanDebounceSeconds }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
});
