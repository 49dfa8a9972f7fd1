import type { ChildProcess } from 'node:child_process';
import type { LightningStore, Rollout, Span } from '@agl/core';
import type { JsonValue } from '@agl/core/schema';
import { useSuiteResource } from '../suite-resource';
import { runNode, SOURCE_NODE_FLAGS, type NodeRun } from './run-node';

/** A TypeScript program run from the workspace sources, untraced or with a preload (`--import <register>`). */
export interface PreloadProgram {
  /** The program file and its arguments. */
  args: string[];
  /** The adapter's preload, e.g. `@agl/openai/register`. */
  register: string;
  /** Added to this process's environment (the test model's URL, key, ...). */
  env: NodeJS.ProcessEnv;
  cwd?: string;
  /** Gets each child process as it starts (to signal it). */
  onSpawn?: (child: ChildProcess) => void;
}

/** A store and the URL it is served at, where preloaded runs record. */
export interface ServedStore {
  readonly store: LightningStore;
  readonly url: string;
}

/** How a test file makes its store: a fresh one, and a server for it (pass `new MemoryStore()`, `createStoreServer`). */
export interface StoreServing {
  createStore: () => LightningStore;
  serveStore: (store: LightningStore) => Promise<{ url: string; close(): Promise<void> }>;
}

/**
 * The usual {@link StoreServing}: a fresh in-memory store, served on 127.0.0.1 at a free port. @agl/testing cannot
 * depend on @agl/store, so the caller hands in its two exports: `memoryStoreServing({ MemoryStore, createStoreServer })`.
 */
export function memoryStoreServing(store: {
  MemoryStore: new () => LightningStore;
  createStoreServer: (options: { store: LightningStore; port: number }) => Promise<{
    url: string;
    close(): Promise<void>;
  }>;
}): StoreServing {
  return {
    createStore: () => new store.MemoryStore(),
    serveStore: (served) => store.createStoreServer({ store: served, port: 0 }),
  };
}

/** Runs the program untraced. */
export function runUntraced(program: PreloadProgram): Promise<NodeRun> {
  return runNode([...SOURCE_NODE_FLAGS, ...program.args], program.env, program.cwd, program.onSpawn);
}

/**
 * Runs the program with `--import <register>` in production mode: `AGL_STORE_URL` of `served` and no runner rollout
 * (the preload records on its own). The run, and every rollout of the store with its spans.
 */
export async function runInProduction(
  program: PreloadProgram,
  served: ServedStore,
): Promise<{ run: NodeRun; rollouts: Array<{ rollout: Rollout; spans: Span[] }> }> {
  const run = await runNode(
    [...SOURCE_NODE_FLAGS, '--import', program.register, ...program.args],
    { ...program.env, AGL_STORE_URL: served.url, AGL_ROLLOUT_ID: '', AGL_ATTEMPT_ID: '' },
    program.cwd,
    program.onSpawn,
  );
  const rollouts = [];
  for (const rollout of (await served.store.queryRollouts()).items) {
    rollouts.push({ rollout, spans: (await served.store.querySpans({ rolloutId: rollout.rolloutId })).items });
  }
  return { run, rollouts };
}

/**
 * Runs the program with `--import <register>`, recording into a new rollout (with `input`) of `served`: the run and
 * the rollout's spans.
 */
export async function runPreloaded(
  program: PreloadProgram,
  served: ServedStore,
  input: JsonValue = {},
): Promise<{ run: NodeRun; spans: Span[] }> {
  const rollout = await served.store.startRollout({ input });
  const run = await runNode(
    [...SOURCE_NODE_FLAGS, '--import', program.register, ...program.args],
    {
      ...program.env,
      AGL_STORE_URL: served.url,
      AGL_ROLLOUT_ID: rollout.rolloutId,
      AGL_ATTEMPT_ID: rollout.attempt.attemptId,
    },
    program.cwd,
    program.onSpawn,
  );
  return { run, spans: (await served.store.querySpans({ rolloutId: rollout.rolloutId })).items };
}

/**
 * Runs the program untraced and preloaded (one after the other, or both at once with `concurrently`): both runs and
 * the preloaded run's spans, for tests that check AGL changes nothing the program does.
 */
export async function runUntracedAndPreloaded(
  program: PreloadProgram,
  served: ServedStore,
  options: { input?: JsonValue; concurrently?: boolean } = {},
): Promise<{ plain: NodeRun; traced: NodeRun; spans: Span[] }> {
  if (options.concurrently) {
    const [plain, preloaded] = await Promise.all([runUntraced(program), runPreloaded(program, served, options.input)]);
    return { plain, traced: preloaded.run, spans: preloaded.spans };
  }
  const plain = await runUntraced(program);
  const { run: traced, spans } = await runPreloaded(program, served, options.input);
  return { plain, traced, spans };
}

/** Serves one fresh store for `served`'s lifetime and closes the server when done. */
export async function withServedStore<T>(serving: StoreServing, use: (served: ServedStore) => Promise<T>): Promise<T> {
  const store = serving.createStore();
  const server = await serving.serveStore(store);
  try {
    return await use({ store, url: server.url });
  } finally {
    await server.close();
  }
}

/**
 * One served store for the tests of the enclosing `describe`: started in `beforeAll`, closed in `afterAll`. Read its
 * fields inside tests only.
 */
export function useServedStore(serving: StoreServing): ServedStore {
  const current = useSuiteResource(
    async () => {
      const store = serving.createStore();
      return { store, server: await serving.serveStore(store) };
    },
    ({ server }) => server.close(),
  );
  return {
    get store() {
      return current().store;
    },
    get url() {
      return current().server.url;
    },
  };
}
