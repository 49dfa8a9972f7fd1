import { Command, InvalidArgumentError, Option } from 'commander';
import { createStoreServer, DEFAULT_MAX_WAIT_SECONDS, DEFAULT_STORE_PORT } from '@agl/store/server';
import { DEFAULT_STORE_PATH } from '@agl/trainer';
import { processIo, type CliIo } from './output';
import { openServeStore } from './store-open';
import { addStoreOpsCommands } from './store-ops-command';
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
  /** More `Host` names a loopback-bound server answers (`--allowed-host`, repeatable). */
  allowedHost?: string[];
  /** PostgreSQL connections per server (with a postgres:// --db). */
  pgPoolSize?: number;
  /** One JSON log line per request on stderr. */
  logJson?: boolean;
  /** `--redact-otlp`: mask secrets in OTLP spans before storing them. */
  redactOtlp?: boolean;
  /** `--no-metrics` sets false. */
  metrics?: boolean;
  /** `--no-dashboard` sets false; default: serve @agl/dashboard's build at `/` when it exists. */
  dashboard?: boolean;
}

/** The built dashboard of `@agl/dashboard`, or `null` when it is not installed or not built. */
async function dashboardDir(): Promise<string | null> {
  try {
    const dashboard = await import('@agl/dashboard');
    return dashboard.isDashboardBuilt() ? dashboard.dashboardAssetsDir : null;
  } catch {
    return null;
  }
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new InvalidArgumentError('use an integer from 0 to 65535 (0 picks a free port).');
  return port;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
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
  const { store, label } = await openServeStore(flags);
  let server;
  const staticDir = flags.dashboard === false ? null : await dashboardDir();
  try {
    server = await createStoreServer({
      staticDir,
      storeLabel: label,
      store,
      host: flags.host,
      port: flags.port,
      token: flags.token ?? (process.env.AGL_STORE_TOKEN || null),
      bodyLimit: Math.round(flags.bodyLimit * 1024 * 1024),
      requestTimeoutMs: Math.round(flags.requestTimeout * 1000),
      maxWaitSeconds: flags.maxWait,
      corsOrigin: flags.corsOrigin ?? null,
      allowedHosts: flags.allowedHost ?? [],
      onWarning: (message) => io.err(`warning: ${message}`),
      metrics: flags.metrics !== false,
      requestLog: flags.logJson === true,
      redactOtlp: flags.redactOtlp === true,
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  io.out(`AGL_STORE_URL=${server.url}`);
  io.out(
    staticDir
      ? `Dashboard: ${server.url}/ (the API is at ${server.url}/v1/agl)`
      : `Dashboard: ${server.url}/ is off (${flags.dashboard === false ? '--no-dashboard' : 'build it: npm run build -w packages/dashboard'}); the API is at ${server.url}/v1/agl`,
  );
  io.out(`Store: ${label}`);
  io.err(`agl store: serving ${label} on ${server.url}; Ctrl-C to stop.`);

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

/** The flags of `agl store serve`, on `cmd`; AGL 0.3's `agl store` takes the network ones too. */
function addServeOptions(cmd: Command, { python }: { python: boolean }): Command {
  cmd
    .option(
      '--host <host>',
      'interface to bind (binding wider than loopback without --token logs a warning)',
      '127.0.0.1',
    )
    .option('--port <port>', 'port; 0 picks a free one', parsePort, DEFAULT_STORE_PORT)
    .option(
      '--cors-origin <origin...>',
      'allow browser calls from these origins ("*" for any, without credentials; never "null"; repeatable); CORS is off by default',
      collect,
    );
  if (python)
    return cmd.addOption(
      new Option(
        '--log-level <level>',
        'accepted for AGL 0.3 compatibility (AGL logs errors and warnings; --log-json on `store serve` logs every request)',
      ).choices(['DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL', 'debug', 'info', 'warning', 'error', 'critical']),
    );
  return cmd
    .option(
      '--db <path|url>',
      'SQLite database file, or postgres://user:pass@host:port/db[?schema=name] for PostgreSQL',
      DEFAULT_STORE_PATH,
    )
    .addOption(new Option('--memory', 'use an in-memory store (nothing is persisted)').conflicts('db'))
    .option('--token <token>', 'require "Authorization: Bearer <token>" on every API route (default: $AGL_STORE_TOKEN)')
    .option(
      '--body-limit <mib>',
      'largest body of the span, OTLP and enqueue routes (and inflated OTLP), in MiB; other routes take 1 MiB',
      parsePositive,
      16,
    )
    .option('--request-timeout <seconds>', 'longest time to receive and answer one request', parsePositive, 60)
    .option(
      '--max-wait <seconds>',
      'longest server-side wait of one long poll (clients loop)',
      parsePositive,
      DEFAULT_MAX_WAIT_SECONDS,
    )
    .option(
      '--allowed-host <host>',
      'answer this Host name too when bound to loopback (repeatable; default: localhost, 127.0.0.1, [::1] only)',
      collect,
      [],
    )
    .option(
      '--no-dashboard',
      'do not serve the dashboard web app at / (served by default when @agl/dashboard is built)',
    )
    .option('--pg-pool-size <n>', 'PostgreSQL connections of this server (with a postgres:// --db)', parsePositive, 10)
    .option('--log-json', 'write one JSON log line per request to stderr (secret query parameters left out)')
    .option(
      '--redact-otlp',
      'mask secrets in spans sent over OTLP (/v1/traces, e.g. Python exporters) before storing them (+ $AGL_REDACT_PATTERNS)',
    )
    .option('--no-metrics', 'do not serve Prometheus metrics at /metrics');
}

/** Every default of `agl store serve`, for `agl store --port …` (AGL 0.3's start command). */
function serveDefaults(): StoreServeFlags {
  return addServeOptions(new Command('serve'), { python: false }).opts<StoreServeFlags>();
}

/**
 * `agl store serve|export|import|prune|backup`. `agl store --host H --port P [--cors-origin O]… [--log-level L]`, AGL
 * 0.3's command that starts its store server, runs `serve` with those flags, so a Python user's start command works.
 */
export function storeCommand(io: CliIo = processIo): Command {
  // Positional options: `--port` before `serve` is `agl store`'s, after it `serve`'s.
  const cmd = new Command('store')
    .enablePositionalOptions()
    .description(
      'run an AGL store server, and export, import, prune or back up a store; `agl store --port 4747` (AGL 0.3 flags --host, --port, --cors-origin, --log-level) runs `agl store serve`',
    );
  addServeOptions(cmd, { python: true }).action(async (flags: Pick<StoreServeFlags, 'host' | 'port' | 'corsOrigin'>) =>
    serveStore({ ...serveDefaults(), host: flags.host, port: flags.port, corsOrigin: flags.corsOrigin }, io),
  );
  addServeOptions(
    cmd
      .command('serve')
      .description('serve a store over HTTP (Agent Lightning 0.3 protocol, OTLP/HTTP traces, AGL 1.0 events)'),
    { python: false },
  ).action(async (flags: StoreServeFlags) => serveStore(flags, io));
  addStoreOpsCommands(cmd, io);
  return cmd;
}
