import { spawn, type ChildProcess } from 'node:child_process';

/** What a child Node process did: exit code, and everything it printed. */
export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `node <args>` with `env` added to this process's environment and collects its exit code and output.
 * `onSpawn` gets the child (to signal it).
 */
export function runNode(
  args: string[],
  env: NodeJS.ProcessEnv,
  cwd?: string,
  onSpawn?: (child: ChildProcess) => void,
): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    onSpawn?.(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Node flags that run the TypeScript sources of the workspace (`@agl/source` condition, tsx). */
export const SOURCE_NODE_FLAGS = ['--conditions=@agl/source', '--import', 'tsx'] as const;

/** What differs between two runs of one program for reasons of their own: drawn ids, the clock and the PID. */
const VOLATILE: [RegExp, string][] = [
  // Node's warning lines, e.g. `(node:4242) Warning: The 'NO_COLOR' env is ignored due to the 'FORCE_COLOR' env…`
  [/\((node|[\w.-]+):\d+\) /g, '($1:<pid>) '],
  [/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>'], // e.g. LangGraph's pregelTaskId
  [/\b(call|chatcmpl|resp)[-_][0-9a-z]+/gi, '$1_<id>'], // ids the test server draws
  [/\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT/g, '<date>'], // an HTTP Date header
];

/** A run with those parts masked, so two runs of one program compare equal when they behave the same. */
export function stableRun(run: NodeRun): NodeRun {
  const mask = (text: string): string => VOLATILE.reduce((out, [pattern, to]) => out.replace(pattern, to), text);
  return { code: run.code, stdout: mask(run.stdout), stderr: mask(run.stderr) };
}
