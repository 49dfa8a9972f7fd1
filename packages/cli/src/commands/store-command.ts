import { Command, InvalidArgumentError, Option } from 'commander';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer, DEFAULT_MAX_WAIT_SECONDS, DEFAULT_STORE_PORT } from '@agl/store/server';
import { processIo, type CliIo } from './output';
import { serveUntilSignal } from './serve-until-signal';

/** Flags of `agl store serve`. */
export interface StoreServeFlags {
  db: string;
  memory?: boolean;
  host: string;
  port: number;
  token?: string;
  bodyLimit: number;
  requestTimeout: number;
  maxWait: number;
  corsOrigin?: string[];
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535) throw new InvalidArgumentError('use an integer from 0 to 65535 (0 picks a free port).');
  return port;
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('use a positive number.');
  return n;
}

/**
 * Runs the store server until SIGINT/SIGTERM: prints `AGL_STORE_URL=…` (machine-readable) and the dashboard URL on
 * stdout; on a signal it drains in-flight requests, then closes the database.
 */
export async function serveStore(flags: StoreServeFlags, io: CliIo = processIo): Promise<void> {
  const store: LightningStore = flags.memory ? new MemoryStore() : new SqliteStore({ path: flags.db });
  let server;
  try {
    server = await createStoreServer({
      store,
      host: flags.host,
      port: flags.port,
      token: flags.token ?? (process.env.AGL_STORE_TOKEN || null),
      bodyLimit: Math.round(flags.bodyLimit * 1024 * 1024),
      requestTimeoutMs: Math.round(flags.requestTimeout * 1000),
      maxWaitSeconds: flags.maxWait,
      corsOrigin: flags.corsOrigin ?? null,
      onWarning: (message) => io.err(`warning: ${message}`),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  io.out(`AGL_STORE_URL=${server.url}`);
  io.out(`Dashboard: ${server.url}/ (the dashboard arrives in a later release; the API is at ${server.url}/v1/agl)`);
  io.err(`agl store: serving ${flags.memory ? 'an in-memory store' : flags.db} on ${server.url}; Ctrl-C to stop.`);

  await serveUntilSignal({
    io,
    label: 'agl store',
    stopping: 'draining requests and closing the store',
    shutdown: async () => {
      await server.close();
      await store.close();
    },
  });
}

/** `agl store serve`. */
export function storeCommand(io: CliIo = processIo): Command {
  const cmd = new Command('store').description('run an AGL store server');
  cmd
    .command('serve')
    .description('serve a store over HTTP (Agent Lightning 0.3 protocol, OTLP/HTTP traces, AGL 1.0 events)')
    .option('--db <path>', 'SQLite database file', './agl.sqlite')
    .addOption(new Option('--memory', 'use an in-memory store (nothing is persisted)').conflicts('db'))
    .option('--host <host>', 'interface to bind (binding wider than loopback without --token logs a warning)', '127.0.0.1')
    .option('--port <port>', 'port; 0 picks a free one', parsePort, DEFAULT_STORE_PORT)
    .option('--token <token>', 'require "Authorization: Bearer <token>" on every API route (default: $AGL_STORE_TOKEN)')
    .option('--body-limit <mib>', 'largest request body, in MiB', parsePositive, 32)
    .option('--request-timeout <seconds>', 'longest time to receive and answer one request', parsePositive, 60)
    .option('--max-wait <seconds>', 'longest server-side wait of one long poll (clients loop)', parsePositive, DEFAULT_MAX_WAIT_SECONDS)
    .option('--cors-origin <origin...>', 'allow browser calls from these origins ("*" for any); CORS is off by default')
    .action(async (flags: StoreServeFlags) => serveStore(flags, io));
  return cmd;
}
