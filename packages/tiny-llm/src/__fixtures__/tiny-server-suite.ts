import { rm } from 'node:fs/promises';
import OpenAI from 'openai';
import { afterAll, beforeAll } from 'vitest';
import { startTinyServer, type TinyServer, type TinyServerOptions } from '../server/tiny-server';

/** What {@link useTinyServer} gives a suite; set by the time the suite's tests run. */
export interface TinyServerSuite {
  readonly dir: string;
  readonly server: TinyServer;
  /** The official openai client on the server's `/v1`. */
  readonly client: OpenAI;
}

/**
 * In the calling suite's `beforeAll`: makes a weights folder with `makeDir` and serves it with `options`; in its
 * `afterAll`: closes the server and removes the folder.
 */
export function useTinyServer(
  makeDir: () => Promise<string>,
  options: Omit<TinyServerOptions, 'weightsDir'>,
): TinyServerSuite {
  let state: { dir: string; server?: TinyServer; client?: OpenAI } | undefined;
  beforeAll(async () => {
    state = { dir: await makeDir() };
    state.server = await startTinyServer({ ...options, weightsDir: state.dir });
    state.client = new OpenAI({ baseURL: `${state.server.url}/v1`, apiKey: 'unused' });
  });
  afterAll(async () => {
    await state?.server?.close();
    if (state) await rm(state.dir, { recursive: true, force: true });
  });
  const ready = (): Required<NonNullable<typeof state>> => {
    if (!state?.server || !state.client) throw new Error("useTinyServer: read before the suite's beforeAll ran.");
    return state as Required<NonNullable<typeof state>>;
  };
  return {
    get dir() {
      return ready().dir;
    },
    get server() {
      return ready().server;
    },
    get client() {
      return ready().client;
    },
  };
}
