import { afterAll, describe, expect, it } from 'vitest';
import { describeStoreConformance } from '@agl/testing';
import { PG_ENABLED, PG_PROBLEM, PG_URL, dropSchema, emptySchema, freshSchema } from './__fixtures__/pg-test-env';
import { PostgresStore } from './index';

describe.runIf(PG_ENABLED)('PostgreSQL for the tests', () => {
  it('is reachable at AGL_TEST_PG_URL (CI starts it with tools/ci/start-postgres.sh)', () => {
    expect(PG_PROBLEM).toBeNull();
  });
});

// The shared suite against PostgresStore: the file migrates its own schema once; each test starts from it emptied.
if (PG_ENABLED) {
  const schema = freshSchema('conf');
  afterAll(() => dropSchema(schema));
  describeStoreConformance(
    'PostgresStore',
    async ({ clock, scanDebounceSeconds }) => {
      await emptySchema(schema);
      const store = await PostgresStore.open({
        connectionString: PG_URL,
        schema,
        clock,
        scanDebounceSeconds,
        poolSize: 8,
      });
      return { store };
    },
    { parallelDequeuers: 100 },
  );
}
