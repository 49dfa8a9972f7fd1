import pg from 'pg';
import { ConnectionError, UserError } from '@agl/core/errors';
import type { AsyncStorageTx, AsyncStoreDatabase } from './async-storage';
import { quoteIdent, validSchemaName } from './pg-migrations';
import { PgStorageTx } from './pg-storage';

/** Connection settings of the PostgreSQL backend. */
export interface PgConnectionOptions {
  /** `postgres://user:password@host:port/database`; a `?schema=name` parameter selects the schema (default `public`). */
  connectionString: string;
  /** Schema holding the store's tables; overrides `?schema=`. Default `public`. */
  schema?: string;
  /** Largest number of pooled connections; default 10. */
  poolSize?: number;
  /** How long to wait for a connection, in ms; default 10 000. */
  connectTimeoutMs?: number;
  /** Re-runs of a transaction after a serialization failure (40001) or deadlock (40P01); default 8. */
  maxRetries?: number;
}

/** SQLSTATEs after which a transaction is safe to re-run. */
const RETRYABLE = new Set(['40001', '40P01']);

/** The URL with its password replaced by `***` (and the `schema` parameter kept), safe for messages and logs. */
export function redactUrl(connectionString: string): string {
  try {
    const url = new URL(connectionString);
    if (url.password) url.password = '***';
    return url.toString();
  } catch {
    return connectionString.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
  }
}

/** Splits `?schema=` off a connection string (pg would pass unknown parameters to the server). */
export function parseConnectionString(connectionString: string, schema?: string): { url: string; schema: string } {
  let url = connectionString;
  let fromUrl: string | null = null;
  try {
    const parsed = new URL(connectionString);
    fromUrl = parsed.searchParams.get('schema');
    if (fromUrl !== null) {
      parsed.searchParams.delete('schema');
      url = parsed.toString();
    }
  } catch {
    throw new UserError(
      `Invalid PostgreSQL URL ${redactUrl(connectionString)}: use postgres://user:password@host:port/database (optionally ?schema=name).`,
    );
  }
  const chosen = schema ?? fromUrl ?? 'public';
  if (!validSchemaName(chosen) || chosen.length > 56) {
    throw new UserError(
      `Invalid PostgreSQL schema name "${chosen}": use letters, digits and underscores (at most 56), starting with a letter.`,
    );
  }
  return { url, schema: chosen };
}

/** Turns a driver error at connect time into a {@link ConnectionError} naming the URL (no password) and the fix. */
export function connectionError(error: unknown, connectionString: string): Error {
  const e = error as { code?: string; message?: string };
  const where = redactUrl(connectionString);
  const reason = e.message ?? String(error);
  let fix = 'Check that PostgreSQL is running and that host, port, user, password and database in the URL are right.';
  if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'EHOSTUNREACH' || e.code === 'ETIMEDOUT') {
    fix = 'Start PostgreSQL (for tests: eval "$(tools/ci/start-postgres.sh)"), or fix the host and port in --db.';
  } else if (e.code === '28P01' || e.code === '28000') {
    fix = "Fix the user or password in the URL (or the server's pg_hba.conf).";
  } else if (e.code === '3D000') {
    fix = 'Create the database first (createdb <name>), or name an existing one in the URL.';
  } else if (/timeout/i.test(reason)) {
    fix =
      'The server did not answer in time: check that it is reachable, or raise the pool size if every connection is busy.';
  }
  return new ConnectionError(where, `Cannot reach the PostgreSQL store at ${where}: ${reason}. ${fix}`, {
    cause: error,
  });
}

const isConnectFailure = (error: unknown): boolean => {
  const code = (error as { code?: string }).code;
  if (typeof code === 'string' && /^(E[A-Z]+|28\w{3}|3D000|08\w{3}|57P0[1-3])$/.test(code)) return true;
  return /timeout exceeded when trying to connect|Connection terminated/i.test((error as Error).message ?? '');
};

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The pooled PostgreSQL database under a {@link PostgresStore}: write transactions (READ COMMITTED plus row locks,
 * re-run on 40001/40P01 with jittered backoff), consistent read transactions (REPEATABLE READ READ ONLY), and the
 * NOTIFY channel name of the schema.
 */
export class PgDatabase implements AsyncStoreDatabase {
  readonly name = 'PostgresStore';
  readonly pool: pg.Pool;
  /** Quoted schema, ready for SQL. */
  readonly qschema: string;
  readonly schema: string;
  /** NOTIFY channel of this schema. */
  readonly channel: string;
  /** The connection string without `?schema=`, for extra clients (LISTEN). */
  readonly url: string;
  readonly #raw: string;
  readonly #maxRetries: number;
  /** Transactions re-run after a serialization failure or deadlock (for metrics and tests). */
  retries = 0;

  constructor(options: PgConnectionOptions) {
    const { url, schema } = parseConnectionString(options.connectionString, options.schema);
    this.url = url;
    this.#raw = options.connectionString;
    this.schema = schema;
    this.qschema = quoteIdent(schema);
    this.channel = `agl_store_${schema}`;
    this.#maxRetries = options.maxRetries ?? 8;
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      idleTimeoutMillis: 30_000,
      application_name: 'agl-store',
    });
    // An idle connection that dies (server restart) must not crash the process; the pool replaces it.
    this.pool.on('error', () => undefined);
  }

  /** A pooled connection, or a {@link ConnectionError} that names the URL and the fix. */
  async connect(): Promise<pg.PoolClient> {
    try {
      return await this.pool.connect();
    } catch (error) {
      throw connectionError(error, this.#raw);
    }
  }

  #tx(client: pg.PoolClient, writable: boolean): AsyncStorageTx {
    return new PgStorageTx({ client, schema: this.qschema, writable, channel: this.channel });
  }

  /** One write transaction, re-run on serialisation failures and deadlocks. */
  async transaction<T>(fn: (tx: AsyncStorageTx) => Promise<T>): Promise<T> {
    return this.#run('BEGIN', true, this.#maxRetries, fn);
  }

  /** One consistent read-only snapshot (never re-run). */
  async read<T>(fn: (tx: AsyncStorageTx) => Promise<T>): Promise<T> {
    return this.#run('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', false, 0, fn);
  }

  async #run<T>(
    begin: string,
    writable: boolean,
    maxRetries: number,
    fn: (tx: AsyncStorageTx) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const client = await this.connect();
      let broken = false;
      try {
        await client.query(begin);
        const result = await fn(this.#tx(client, writable));
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        const code = (error as { code?: string }).code;
        if (code !== undefined && RETRYABLE.has(code) && attempt < maxRetries) {
          this.retries += 1;
          await sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
          continue;
        }
        if (isConnectFailure(error)) throw connectionError(error, this.#raw);
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
