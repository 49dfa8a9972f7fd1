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
