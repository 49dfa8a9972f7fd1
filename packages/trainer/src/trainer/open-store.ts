import { mkdir } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import type { LightningStore } from '@agl/core';
import { StoreClient } from '@agl/store/client';
import { SqliteStore } from '@agl/store/sqlite';

/** Default embedded store file, relative to the working directory. */
export const DEFAULT_STORE_PATH = '.agl/store.sqlite';

/** A store the trainer opened itself (and closes at the end), or one it was given. */
export interface OpenedStore {
  store: LightningStore;
  /** The HTTP endpoint when the store is a `StoreClient`. */
  url: string | null;
  token: string | null;
  owned: boolean;
  /** Where the store is, for people: the SQLite file (relative to the working directory when inside it), the URL, or `null` for an instance. */
  location: string | null;
}

/**
 * Resolve the trainer's store: an instance as given; a `http(s)://` URL → `StoreClient`; otherwise an embedded
 * `SqliteStore` at the path (default `.agl/store.sqlite`).
 */
export async function openStore(options: {
  store?: LightningStore | string | null;
  storePath?: string;
  token?: string | null;
}): Promise<OpenedStore> {
  const { store } = options;
  if (store && typeof store === 'object')
    return { store, url: null, token: options.token ?? null, owned: false, location: instanceLocation(store) };
  if (typeof store === 'string' && /^https?:\/\//u.test(store)) {
    return {
      store: new StoreClient({ url: store, token: options.token ?? undefined }),
      url: store,
      token: options.token ?? null,
      owned: true,
      location: store,
    };
  }
  const path = resolve(typeof store === 'string' ? store : (options.storePath ?? DEFAULT_STORE_PATH));
  await mkdir(dirname(path), { recursive: true });
  return { store: new SqliteStore({ path }), url: null, token: null, owned: true, location: shownPath(path) };
}

/** A path relative to the working directory when it is inside it, else absolute. */
function shownPath(path: string): string {
  const full = resolve(path);
  const shown = relative(process.cwd(), full);
  return shown && !shown.startsWith('..') && !isAbsolute(shown) ? shown : full;
}

/** Where a store instance keeps its data, when it says: a SQLite file or a server URL. */
function instanceLocation(store: LightningStore): string | null {
  const file = store.capabilities.sqliteFile;
  if (file !== undefined) return shownPath(file);
  if (store instanceof StoreClient) return store.url;
  return null;
}
