import { describe, expect, it } from 'vitest';
import { runNode, stableRun } from './run-node';

describe('stableRun', () => {
  it("masks the PID of Node's warning lines, so two runs with NO_COLOR and FORCE_COLOR both set compare equal", async () => {
    const env = { NO_COLOR: '1', FORCE_COLOR: '0' };
    const program = ['-e', "process.emitWarning('careful'); console.log('done')"];
    const [first, second] = await Promise.all([runNode(program, env), runNode(program, env)]);
    expect(first.stderr).toMatch(/\(node:\d+\) /);
    expect(first.stderr, 'the two runs differ by their PIDs').not.toBe(second.stderr);
    expect(stableRun(first)).toEqual(stableRun(second));
    expect(stableRun(first).stderr).toContain('(node:<pid>) Warning: careful');
  });
});
