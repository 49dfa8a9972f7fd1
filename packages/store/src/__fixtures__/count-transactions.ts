import type { SyncRuleRunner } from '../engine/sync-rule-runner';
import type { MemoryStore } from '../memory/memory-store';
import type { SqliteStore } from '../sqlite/sqlite-store';

/** Counts the write transactions (commits) an embedded store opens from now on. */
export function countTransactions(store: MemoryStore | SqliteStore): () => number {
  const storage = (store as unknown as { runner: SyncRuleRunner }).runner.storage;
  let count = 0;
  for (const name of ['transaction', 'tryTransaction'] as const) {
    const original = storage[name]?.bind(storage);
    if (!original) continue;
    (storage as unknown as Record<string, unknown>)[name] = (fn: () => unknown) => {
      count += 1;
      return original(fn);
    };
  }
  return () => count;
}
