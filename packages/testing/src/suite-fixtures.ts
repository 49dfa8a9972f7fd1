import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startOpenAiTestServer } from './openai-test-server/index';
import type { OpenAiTestServer, OpenAiTestServerOptions } from './openai-test-server/types';

/** Makes temp folders for a suite (`make(prefix)`), all removed in the suite's vitest `afterAll`. */
export function useTempDirs(): { make(prefix: string): Promise<string> } {
  const dirs: string[] = [];
  afterAll(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });
  return {
    async make(prefix) {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
  };
}

/** What {@link useTestLlmAndDir} gives a suite; both are set by the time the suite's own `beforeAll` runs. */
export interface TestLlmAndDir {
  readonly llm: OpenAiTestServer;
  readonly dir: string;
}

/**
 * Starts an OpenAI-compatible test server with `options` and makes a temp folder named `dirPrefix…` in a vitest
 * `beforeAll` of the calling suite; closes the server and removes the folder in its `afterAll`.
 */
export function useTestLlmAndDir(options: OpenAiTestServerOptions & { dirPrefix: string }): TestLlmAndDir {
  const { dirPrefix, ...serverOptions } = options;
  const dirs = useTempDirs();
  let llm: OpenAiTestServer | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    llm = await startOpenAiTestServer(serverOptions);
    dir = await dirs.make(dirPrefix);
  });
  afterAll(async () => {
    await llm?.close();
  });
  const ready = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`useTestLlmAndDir: ${name} is read before the suite's beforeAll ran.`);
    return value;
  };
  return {
    get llm() {
      return ready(llm, 'llm');
    },
    get dir() {
      return ready(dir, 'dir');
    },
  };
}

/** The offline settings every example's end-to-end suite runs with (see {@link useOfflineExampleRun}). */
export interface OfflineExampleSettings {
  baseURL: string;
  model: string;
  returnTokenIds: true;
  workDir: string;
  nRunners: number;
}

/**
 * An example's whole run against the test LLM, once per suite: {@link useTestLlmAndDir}, then in a `beforeAll`
 * (`timeoutMs`, default 90 s) `run` with the test server's URL, model `test-model`, token ids on, the temp folder as
 * work dir and two runners. `result()` gives what `run` returned.
 */
export function useOfflineExampleRun<T>(
  options: OpenAiTestServerOptions & { dirPrefix: string },
  run: (settings: OfflineExampleSettings) => Promise<T>,
  timeoutMs = 90_000,
): TestLlmAndDir & { result(): T } {
  const suite = useTestLlmAndDir(options);
  let result: { value: T } | undefined;
  beforeAll(async () => {
    const settings = { baseURL: suite.llm.baseURL, model: 'test-model', returnTokenIds: true as const };
    result = { value: await run({ ...settings, workDir: suite.dir, nRunners: 2 }) };
  }, timeoutMs);
  return Object.assign(suite, {
    result(): T {
      if (!result) throw new Error("useOfflineExampleRun: result() is read before the suite's beforeAll ran.");
      return result.value;
    },
  });
}
