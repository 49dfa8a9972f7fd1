import { createRequire } from 'node:module';
import type * as DevkitExports from 'nx/src/devkit-exports';
import type * as NxJson from 'nx/src/config/nx-json';
import type * as HashPlan from 'nx/src/hasher/hash-plan-inspector';
import type * as TaskHasher from 'nx/src/hasher/create-task-hasher';
import type * as TaskGraph from 'nx/src/tasks-runner/create-task-graph';
import type * as HashTask from 'nx/src/hasher/hash-task';
import { describe, expect, it } from 'vitest';

// Nx's task hashing, in process (no daemon): what `nx run <project>:test` keys its cache on.
process.env.NX_DAEMON = 'false';
const require = createRequire(import.meta.url);
const { createProjectGraphAsync } = require('nx/src/devkit-exports') as typeof DevkitExports;
const { readNxJson } = require('nx/src/config/nx-json') as typeof NxJson;
const { HashPlanInspector } = require('nx/src/hasher/hash-plan-inspector') as typeof HashPlan;
const { createTaskHasher } = require('nx/src/hasher/create-task-hasher') as typeof TaskHasher;
const { createTaskGraph } = require('nx/src/tasks-runner/create-task-graph') as typeof TaskGraph;
const { hashTask } = require('nx/src/hasher/hash-task') as typeof HashTask;

/** Environment variables that decide whether PostgreSQL tests run, skip or fail (see `isCi` in @agl/testing). */
const TEST_ENV = ['CI', 'AGL_TEST_PG_URL'];

describe('Nx test cache', { timeout: 120_000 }, () => {
  it('every test target hashes CI and AGL_TEST_PG_URL, so a run that skipped PostgreSQL is not replayed as a pass', async () => {
    const graph = await createProjectGraphAsync({ exitOnError: false });
    const withTests = Object.values(graph.nodes)
      .filter((node) => node.data.targets?.test !== undefined)
      .map((node) => node.name);
    expect(withTests).toContain('@agl/store');
    const inspector = new HashPlanInspector(graph);
    await inspector.init();
    const plan = inspector.inspectHashPlan(withTests, ['test'], undefined, {}, undefined, true);
    for (const project of withTests) {
      const inputs = plan[`${project}:test`] ?? [];
      expect(
        TEST_ENV.filter((name) => !inputs.includes(`env:${name}`)),
        `${project}:test inputs`,
      ).toEqual([]);
    }

    // And the hash itself moves with them: each variable, set or changed, gives @agl/store:test another cache key.
    const hashes: string[] = [];
    const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !TEST_ENV.includes(name)));
    for (const env of [
      {},
      { AGL_TEST_PG_URL: 'postgres://127.0.0.1:1/a' },
      { AGL_TEST_PG_URL: 'postgres://127.0.0.1:1/b' },
      { CI: 'true' },
    ]) {
      const taskGraph = createTaskGraph(graph, {}, ['@agl/store'], ['test'], undefined, {}, true);
      const task = Object.values(taskGraph.tasks)[0]!;
      await hashTask(createTaskHasher(graph, readNxJson()), graph, taskGraph, task, { ...base, ...env }, null);
      hashes.push(task.hash!);
    }
    expect(new Set(hashes).size).toBe(hashes.length);
  });
});
