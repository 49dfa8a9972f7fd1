import { describe, expect, it } from 'vitest';
import { describeStoreConformance } from '@agl/testing';
import { PG_ENABLED, PG_PROBLEM, conformanceSchema } from './__fixtures__/pg-test-env';

describe.runIf(PG_ENABLED)('PostgreSQL for the tests', () => {
  it('is reachable at AGL_TEST_PG_URL (CI starts it with tools/ci/start-postgres.sh)', () => {
    expect(PG_PROBLEM).toBeNull();
  });
});

// The shared suite against PostgresStore: the file migrates its own schema once; each test starts from it emptied.
if (PG_ENABLED) {
  const db = conformanceSchema('conf');
  describeStoreConformance(
    'PostgresStore',
    async (context) => {
      await db.empty();
      return { store: await db.open(context, 8) };
    },
    { parallelDequeuers: 100 },
  );
}
