import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

/** Node flags that run a TypeScript file with workspace packages resolved to their sources. */
export const TS_EXEC_ARGV = ['--conditions=@agl/source', '--import', 'tsx'];

/** Spawns `node [flags] file` with stdout piped (stderr inherited, so crashes show in the test log). */
export function spawnNode(options: {
  file: string;
  typescript?: boolean;
  env?: Record<string, string>;
  args?: string[];
}): ChildProcess {
  const execArgv = options.typescript === false ? [] : TS_EXEC_ARGV;
  return spawn(process.execPath, [...execArgv, options.file, ...(options.args ?? [])], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Calls `onLine` for each stdout line of `child`. */
export function onLines(child: ChildProcess, onLine: (line: string) => void): void {
  if (!child.stdout) throw new Error('child has no piped stdout');
  createInterface({ input: child.stdout }).on('line', onLine);
}

/** Resolves with the first stdout line matching `pattern` (its first group), or rejects on exit or after `timeoutMs`. */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 60_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
    const onExit = (code: number | null, signal: string | null): void => {
      clearTimeout(timer);
      reject(new Error(`child exited (${signal ?? `code ${code}`}) before printing a line matching ${pattern}`));
    };
    child.once('exit', onExit);
    onLines(child, (line) => {
      const match = pattern.exec(line);
      if (match) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(match[1] ?? match[0]);
      }
    });
  });
}

/** Sends `signal` and waits until the process is gone. */
export async function killAndWait(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill(signal);
  await exited;
}
