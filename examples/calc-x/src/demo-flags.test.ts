import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Runs `npm run demo`'s script with `args`; bad flags exit before anything starts, so this takes a second or two. */
function demo(args: string[]): { status: number | null; stderr: string } {
  const r = spawnSync(process.execPath, ['--conditions=@agl/source', '--import', 'tsx', 'src/demo.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, stderr: r.stderr };
}

describe('npm run demo flags', { timeout: 120_000 }, () => {
  it.each([
    ['rounds', 'abc'],
    ['sft-stop-at', ''],
    ['rl-lr', '1e-3x'],
  ])('refuses --%s %j, a numeric flag that is not a number, naming the flag and the value', (flag, value) => {
    const r = demo([`--${flag}`, value]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--${flag} ${value}: not a number; give a number, e.g. --${flag} 40`);
  });

  it('refuses a choice outside the allowed values, listing them', () => {
    const r = demo(['--token-shifts', '3']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--token-shifts 3: unknown value; use one of 1, 2');
    const seg = demo(['--segment-positions', 'yes']);
    expect(seg.status).toBe(2);
    expect(seg.stderr).toContain('--segment-positions yes: unknown value; use one of on, off');
    const ops = demo(['--train-ops', '+/']);
    expect(ops.status).toBe(2);
    expect(ops.stderr).toContain('--train-ops +/: the operator mix "+/" may hold only +, - and *');
  });

  it('refuses --backend tiny, which was removed, naming the fix', () => {
    const r = demo(['--backend', 'tiny']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--backend tiny: removed; the demo trains the embedded policy through Tinker's API");
    expect(r.stderr).toContain('Drop the flag or pass --backend tinker.');
  });
});
