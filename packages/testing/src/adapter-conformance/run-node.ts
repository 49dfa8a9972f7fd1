import { spawn } from 'node:child_process';

/** What a child Node process did: exit code, and everything it printed. */
export interface NodeRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node <args>` with `env` added to this process's environment and collects its exit code and output. */
export function runNode(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      env: { ...process.env, ...env },
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/**
 * A run with the ids a framework draws afresh each run (UUIDs, e.g. LangGraph's `pregelTaskId` in a printed error)
 * masked, so two runs of one program compare equal when they behave the same.
 */
export function stableRun(run: NodeRun): NodeRun {
  return { code: run.code, stdout: run.stdout.replace(UUID, '<uuid>'), stderr: run.stderr.replace(UUID, '<uuid>') };
}
