import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

/** The repository root (examples/support-bot/src → ../../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Node flags that run workspace TypeScript sources. */
export const SOURCE_FLAGS = ['--conditions=@agl/source', '--import', 'tsx'];

/** A child process that printed its `NAME=url` line. */
export interface ChildService {
  url: string;
  child: ChildProcess;
  /** Everything it wrote so far (stdout and stderr). */
  output(): string;
  /** Sends `signal` (default SIGTERM) and resolves once it exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Spawns `node <args>` in the repository root and resolves once a stdout line matches `urlLine` (its first group is
 * the URL); rejects if it exits first or stays silent for `timeoutMs`.
 */
export function startChildService(options: {
  args: string[];
  urlLine: RegExp;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}): Promise<ChildService> {
  const child = spawn(process.execPath, options.args, {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const stop = async (signal: NodeJS.Signals = 'SIGTERM'): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill(signal);
    await exited;
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${options.args.join(' ')}: no URL line within ${options.timeoutMs ?? 60_000} ms:\n${output}`));
    }, options.timeoutMs ?? 60_000);
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const url = options.urlLine.exec(output)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      resolve({ url, child, output: () => output, stop });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${options.args.join(' ')} exited (${signal ?? code}) before printing its URL:\n${output}`));
    });
  });
}

/** `agl store serve --port <port> --db <db>` (the CLI, from source); port 0 picks a free one. */
export function startStoreServe(options: { db: string; port?: number }): Promise<ChildService> {
  return startChildService({
    args: [
      ...SOURCE_FLAGS,
      'packages/cli/src/bin.ts',
      'store',
      'serve',
      '--port',
      String(options.port ?? 0),
      '--db',
      options.db,
    ],
    urlLine: /^AGL_STORE_URL=(\S+)/mu,
  });
}

/**
 * The support service as `npm start` runs it (`--import @agl/langchain/register src/main.ts`), on a free port, with
 * `env` (OPENAI_BASE_URL, AGL_STORE_URL, AGL_SAMPLE_RATE...).
 */
export function startSupportBotProcess(env: NodeJS.ProcessEnv): Promise<ChildService> {
  return startChildService({
    args: [...SOURCE_FLAGS, '--import', '@agl/langchain/register', 'examples/support-bot/src/main.ts'],
    urlLine: /^SUPPORT_BOT_URL=(\S+)/mu,
    env: { PORT: '0', OPENAI_API_KEY: 'sk-test', ...env },
  });
}

/** Polls `check` until it returns a value other than undefined, or throws after `timeoutMs` naming `what`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
