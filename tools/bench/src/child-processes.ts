import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository root (tools/bench/src → ../../..). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** Node flags that run workspace TypeScript sources directly. */
export const SOURCE_EXEC_ARGV = ['--conditions=@agl/source', '--import', 'tsx'];
/** The `agl` CLI entry (from source). */
export const AGL_BIN = fileURLToPath(new URL('../../../packages/cli/src/bin.ts', import.meta.url));

/** A running `agl store serve`. */
export interface ServedStore {
  proc: ChildProcess;
  url: string;
  /** Peak resident set size so far in MB (Linux `VmHWM`), or null where /proc is missing. */
  peakRssMb(): number | null;
  /** CPU seconds used so far (Linux), or null. */
  cpuSeconds(): number | null;
  /** SIGTERM, then wait for a clean exit (the CPU profile, when asked for, is written then). */
  stop(): Promise<number | null>;
}

/** Reads `VmHWM` (peak RSS) of a process from /proc, in MB. */
export function peakRssMbOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const match = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** CPU seconds (user + system) a live process has used so far (Linux /proc), or null. */
export function cpuSecondsOf(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // Fields after the command: state is index 0, so utime (14th overall) is index 11 and stime index 12.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

/**
 * Starts the real `agl store serve --port 0 --db <dbPath>` in a child process and waits for its
 * `AGL_STORE_URL=...` line. `cpuProfileDir` adds `--cpu-prof` (the profile is written when the server exits).
 */
export async function serveStore(options: {
  dbPath: string;
  cpuProfileDir?: string;
  extraArgs?: string[];
}): Promise<ServedStore> {
  const profile = options.cpuProfileDir ? ['--cpu-prof', `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const proc = spawn(
    process.execPath,
    [
      ...SOURCE_EXEC_ARGV,
      ...profile,
      AGL_BIN,
      'store',
      'serve',
      '--port',
      '0',
      '--db',
      options.dbPath,
      ...(options.extraArgs ?? []),
    ],
    {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const stderr: string[] = [];
  proc.stderr!.on('data', (chunk: Buffer) => {
    stderr.push(chunk.toString());
    if (stderr.length > 50) stderr.shift();
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = /AGL_STORE_URL=(\S+)/.exec(out);
      if (match) {
        proc.stdout!.off('data', onData);
        resolve(match[1]!);
      }
    };
    proc.stdout!.on('data', onData);
    proc.once('exit', (code) => reject(new Error(`agl store serve exited early (${code}): ${stderr.join('')}`)));
  });
  proc.stdout!.resume();
  return {
    proc,
    url,
    peakRssMb: () => peakRssMbOf(proc.pid),
    cpuSeconds: () => cpuSecondsOf(proc.pid),
    stop: async () => {
      if (proc.exitCode !== null) return proc.exitCode;
      proc.kill('SIGTERM');
      const [code] = (await once(proc, 'exit')) as [number | null];
      return code;
    },
  };
}
