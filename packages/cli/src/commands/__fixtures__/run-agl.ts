import { runCli } from '../../program';

/** Runs `agl ...args` in-process; resolves with its exit code and everything it printed. */
export async function agl(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await runCli(['node', 'agl', ...args], {
    out: (l) => void (out += `${l}\n`),
    err: (l) => void (err += `${l}\n`),
  });
  return { code, out, err };
}
