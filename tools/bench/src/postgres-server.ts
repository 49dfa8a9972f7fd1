import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, serveStore, type ServedStore } from './child-processes';

/** How to start `agl store serve` on PostgreSQL, or why it cannot be. */
export interface PostgresServerStarter {
  start?: () => Promise<ServedStore>;
  reason: string;
}

/**
 * With `AGL_TEST_PG_URL` set and `PostgresStore` present (packages/store/src/postgres), each call starts
 * `agl store serve --db <url>?schema=agl_bench_<n>` on a fresh schema, dropped again when the server stops.
 */
export async function postgresServerStarter(): Promise<PostgresServerStarter> {
  const url = process.env.AGL_TEST_PG_URL;
  if (!url)
    return {
      reason: 'not available: AGL_TEST_PG_URL is not set (eval "$(tools/ci/start-postgres.sh)" starts a local server)',
    };
  if (!existsSync(join(REPO_ROOT, 'packages/store/src/postgres/index.ts')))
    return { reason: 'not available: @agl/store has no PostgresStore (packages/store/src/postgres)' };
  let n = 0;
  return {
    reason: '',
    start: async () => {
      n += 1;
      const schema = `agl_bench_${process.pid}_${n}`;
      const served = await serveStore({
        dbPath: `${url}${url.includes('?') ? '&' : '?'}schema=${schema}`,
        extraArgs: ['--pg-pool-size', '10'],
      });
      return {
        ...served,
        stop: async () => {
          const code = await served.stop();
          await dropSchema(url, schema).catch(() => undefined);
          return code;
        },
      };
    },
  };
}

async function dropSchema(url: string, schema: string): Promise<void> {
  const pg = (await import('pg')) as unknown as {
    default: {
      Client: new (o: { connectionString: string }) => {
        connect(): Promise<void>;
        query(q: string): Promise<unknown>;
        end(): Promise<void>;
      };
    };
  };
  const client = new pg.default.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}
