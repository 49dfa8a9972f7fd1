import { isCi } from './ci-env';

/** What {@link postgresTestEnv} needs of a PostgreSQL client: `pg.Client` (@agl/testing does not depend on `pg`). */
export interface PgProbeClient {
  connect(): Promise<unknown>;
  query(sql: string): Promise<unknown>;
  end(): Promise<unknown>;
}

/** The PostgreSQL of the tests, as {@link postgresTestEnv} found it. */
export interface PostgresTestEnv {
  /** `AGL_TEST_PG_URL` (`''` when unset). */
  url: string;
  /** Why PostgreSQL is unusable (null when it answers); tests assert it is null so CI fails with the reason. */
  problem: string | null;
  /** True when the PostgreSQL tests should run: a reachable server, or CI (where they then fail loudly). */
  enabled: boolean;
}

/**
 * Probes the PostgreSQL at `AGL_TEST_PG_URL` (start one with `eval "$(tools/ci/start-postgres.sh)"`). Outside CI a
 * missing or unreachable server skips the tests named by `what` with a message on stderr; in CI (`isCi()`) it fails
 * them.
 *
 * @example
 * const PG = await postgresTestEnv((config) => new pg.Client(config), 'PostgreSQL tests');
 * describe.runIf(PG.enabled)('…', () => { it('PostgreSQL answers', () => expect(PG.problem).toBeNull()); });
 */
export async function postgresTestEnv(
  client: (config: { connectionString: string; connectionTimeoutMillis: number }) => PgProbeClient,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<PostgresTestEnv> {
  const url = env.AGL_TEST_PG_URL ?? '';
  const problem = await probe(url, client);
  const inCi = isCi(env);
  if (problem !== null && !inCi) {
    process.stderr.write(`[agl] skipping the ${what}: ${problem}. Run: eval "$(tools/ci/start-postgres.sh)"\n`);
  }
  return { url, problem, enabled: problem === null || inCi };
}

async function probe(url: string, client: Parameters<typeof postgresTestEnv>[0]): Promise<string | null> {
  if (url === '') return 'AGL_TEST_PG_URL is not set';
  const c = client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
    return null;
  } catch (error) {
    return `cannot reach ${url}: ${(error as Error).message}`;
  } finally {
    await c.end().catch(() => undefined);
  }
}
