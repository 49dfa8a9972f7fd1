import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin.ts', import.meta.url));

/** A running `agl` child process (the sources, through tsx), with what it printed so far. */
export interface SpawnedAgl {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** The value of the first `NAME=value` line on stdout (e.g. `AGL_TINY_URL`); rejects if the process exits first. */
  line: (name: string) => Promise<string>;
  out: () => string;
  err: () => string;
}

/** Starts `agl ...args` as a child process (for servers that run until a signal); `AGL_STORE_URL` is cleared. */
export function spawnAgl(args: string[], env: Record<string, string> = {}): SpawnedAgl {
  const child = spawn(process.execPath, ['--conditions=@agl/source', '--import', 'tsx', BIN, ...args], {
    env: { ...process.env, AGL_STORE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const line = (name: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const look = () => {
        const match = new RegExp(`^${name}=(\\S+)$`, 'm').exec(out);
        if (match) resolve(match[1]!);
      };
      child.stdout.on('data', look);
      look();
      child.once('exit', (code) => reject(new Error(`agl ${args.join(' ')} exited with ${code}: ${err}`)));
    });
  return { child, line, out: () => out, err: () => err };
}
