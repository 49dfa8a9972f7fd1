import { Command } from 'commander';
import type { LightningStore } from '@agl/core';
import { isPostgresUrl } from '@agl/store/ops';
import { openStore, DEFAULT_STORE_PATH } from '@agl/trainer';

/** `--store-url`, `--store`, `--token` on commands that read or write a store. */
export interface StoreFlags {
  storeUrl?: string;
  store?: string;
  token?: string;
}

/** Add the store-selection flags to a command. */
export function withStoreFlags(cmd: Command): Command {
  return cmd
    .option('--store-url <url>', 'a running `agl store serve` (default: $AGL_STORE_URL)')
    .option('--store <path|url>', `embedded SQLite store file, or a postgres:// URL (default: ${DEFAULT_STORE_PATH})`)
    .option('--token <token>', 'bearer token of the store server (default: $AGL_STORE_TOKEN)');
}

/** Open the store the flags select: `--store-url`/`$AGL_STORE_URL` over HTTP, else the SQLite file or PostgreSQL URL. */
export async function openCliStore(flags: StoreFlags): Promise<{ store: LightningStore; close(): Promise<void> }> {
  const url = flags.storeUrl ?? (process.env.AGL_STORE_URL || undefined);
  const token = flags.token || process.env.AGL_STORE_TOKEN || null;
  const target = url ?? flags.store ?? DEFAULT_STORE_PATH;
  if (isPostgresUrl(target)) {
    const { PostgresStore } = await import('@agl/store/postgres');
    const store = await PostgresStore.open({ connectionString: target, poolSize: 2 });
    return { store, close: () => store.close() };
  }
  const opened = await openStore({ store: target, token });
  return { store: opened.store, close: () => (opened.owned ? opened.store.close() : Promise.resolve()) };
}

/** Runs `use` on the store the flags select, closing the store afterwards (also when `use` throws). */
export async function withCliStore<T>(flags: StoreFlags, use: (store: LightningStore) => Promise<T>): Promise<T> {
  const { store, close } = await openCliStore(flags);
  try {
    return await use(store);
  } finally {
    await close();
  }
}

/**
 * A command that reads or writes a store: `name` (a subcommand of `parent` when given) with its description, the
 * arguments and flags `configure` adds, then the store flags (so help lists them last).
 */
export function storeCommand(
  name: string,
  description: string,
  configure: (cmd: Command) => Command = (cmd) => cmd,
  parent?: Command,
): Command {
  return withStoreFlags(configure((parent ? parent.command(name) : new Command(name)).description(description)));
}
