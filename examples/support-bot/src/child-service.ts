import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (examples/support-bot/src → ../../..), when this example sits in the AGL monorepo. */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** This example's folder: where its README's commands run, in the monorepo or copied out. */
export const EXAMPLE_DIR = fileURLToPath(new URL('../', import.meta.url));
const MONOREPO_CLI = join(REPO_ROOT, 'packages/cli/src/bin.ts');
/**
 * True inside the AGL monorepo (the CLI's sources next door); false in a copy of this folder that installed the packed
 * packages, which then run from their `dist/`.
 */
export const IN_MONOREPO = existsSync(MONOREPO_CLI);
/** Node flags that run this example's TypeScript (and, in the monorepo, the workspace packages' sources). */
export const SOURCE_FLAGS = IN_MONOREPO ? ['--conditions=@agl/source', '--import', 'tsx'] : ['--import', 'tsx'];

/** The `agl` command as node arguments: the CLI's sources in the monorepo, else the installed `@agl/cli` bin. */
function aglArgs(): string[] {
  if (IN_MONOREPO) return [...SOURCE_FLAGS, MONOREPO_CLI];
  return [join(dirname(fileURLToPath(import.meta.resolve('@agl/cli/package.json'))), 'bin', 'agl.js')];
}

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
 * Spawns `node <args>` in this example's folder and resolves once a stdout line matches `urlLine` (its first group is
 * the URL); rejects if it exits first or stays silent for `timeoutMs`.
 */
export function startChildService(options: {
  args: string[];
  urlLine: RegExp;
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}): Promise<ChildService> {
  const child = spawn(process.execPath, options.args, {
    cwd: EXAMPLE_DIR,
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

/** `agl store serve --port <port> --db <db>` (in the monorepo the CLI's sources); port 0 picks a free one. */
export function startStoreServe(options: { db: string; port?: number }): Promise<ChildService> {
  return startChildService({
    args: [...aglArgs(), 'store', 'serve', '--port', String(options.port ?? 0), '--db', options.db],
    urlLine: /^AGL_STORE_URL=(\S+)/mu,
  });
}

/**
 * The support service as `npm start` runs it (`--import @agl/langchain/register src/main.ts`), on a free port, with
 * `env` (OPENAI_BASE_URL, AGL_STORE_URL, AGL_SAMPLE_RATE...).
 */
export function startSupportBotProcess(env: NodeJS.ProcessEnv): Promise<ChildService> {
  return startChildService({
    args: [...SOURCE_FLAGS, '--import', '@agl/langchain/register', join(EXAMPLE_DIR, 'src/main.ts')],
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
