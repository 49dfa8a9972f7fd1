import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { killAndWait, spawnNode, waitForLine } from './child-process';

const SERVER = fileURLToPath(new URL('../__fixtures__/sqlite-server.ts', import.meta.url));

/** A store server (SqliteStore + createStoreServer) running in a child process. */
export interface StoreProcess {
  url: string;
  child: ChildProcess;
  /** `kill -9`: no shutdown code runs. */
  crash(): Promise<void>;
  /** SIGTERM: graceful close. */
  stop(): Promise<void>;
}

/** Starts the store server fixture on `dbPath` and waits for its `AGL_STORE_URL=` line. */
export async function startStoreProcess(options: { dbPath: string; token?: string }): Promise<StoreProcess> {
  const child = spawnNode({ file: SERVER, env: { AGL_DB: options.dbPath, AGL_STORE_TOKEN: options.token ?? '' } });
  try {
    const url = await waitForLine(child, /^AGL_STORE_URL=(\S+)$/);
    return { url, child, crash: () => killAndWait(child, 'SIGKILL'), stop: () => killAndWait(child, 'SIGTERM') };
  } catch (error) {
    await killAndWait(child);
    throw error;
  }
}
