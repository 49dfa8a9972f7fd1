/**
 * The agent of the runner-fault tests, loaded by the runner's worker processes (`workerMode: 'process'`). It keeps a
 * lock file per rollout while it runs (a second concurrent run of the same rollout finds the lock and records an
 * overlap), logs every attempt, and on a `killme` task's first attempt announces its pid and hangs until killed.
 */
import { appendFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

interface Ctx {
  rolloutId: string;
  attemptId: string;
  rollout: { attempt: { sequenceId: number } };
}

export async function agent(task: { kind: string }, _resources: unknown, ctx: Ctx): Promise<number> {
  const dir = process.env.AGL_RELIABILITY_DIR;
  if (!dir) throw new Error('AGL_RELIABILITY_DIR is not set');
  const lock = join(dir, `active-${ctx.rolloutId}`);
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
  } catch {
    writeFileSync(join(dir, `overlap-${ctx.rolloutId}-${ctx.attemptId}`), String(process.pid));
  }
  appendFileSync(join(dir, 'attempts.jsonl'), `${JSON.stringify({ rolloutId: ctx.rolloutId, attemptId: ctx.attemptId, sequence: ctx.rollout.attempt.sequenceId, pid: process.pid })}\n`);
  if (task.kind === 'killme' && ctx.rollout.attempt.sequenceId === 1) {
    writeFileSync(join(dir, `kill-${ctx.rolloutId}`), String(process.pid));
    await new Promise((resolve) => setTimeout(resolve, 120_000));
  }
  await new Promise((resolve) => setTimeout(resolve, 20));
  rmSync(lock, { force: true });
  return 1;
}
