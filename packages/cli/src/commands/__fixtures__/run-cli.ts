import { runCli } from '../../program';
import type { CliIo } from '../output';

/** Runs `agl <args>` in this process; returns the exit code and the captured stdout / stderr lines. */
export async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = { out: (l) => void out.push(l), err: (l) => void err.push(l) };
  const code = await runCli(['node', 'agl', ...args], io);
  return { code, out: out.join('\n'), err: err.join('\n') };
}
