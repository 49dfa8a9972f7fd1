// Child process: claims rollouts until the queue is empty, writing a span per claim; prints the claimed ids.
import { existsSync, writeFileSync } from 'node:fs';
import { SqliteStore } from '../index';

const [path, workerId, peer] = [process.argv[2]!, process.argv[3]!, process.argv[4]];
const store = new SqliteStore({ path, scanDebounceSeconds: 0 });
// Barrier: start claiming only once the peer process has opened the file too, so the two really overlap.
if (peer) {
  writeFileSync(`${path}.ready-${workerId}`, '');
  const deadline = Date.now() + 30_000;
  while (!existsSync(`${path}.ready-${peer}`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
}
const claimed: string[] = [];
for (;;) {
  const r = await store.dequeueRollout({ workerId });
  if (!r) break;
  claimed.push(r.rolloutId);
  await store.addSpan({
    rolloutId: r.rolloutId,
    attemptId: r.attempt.attemptId,
    sequenceId: 1,
    traceId: workerId,
    spanId: `s-${r.rolloutId}`,
    parentId: null,
    name: 'claim',
    startTime: 1,
    endTime: 2,
  });
  await store.updateAttempt(r.rolloutId, r.attempt.attemptId, { status: 'succeeded' });
  // Leave the write lock free for a moment: SQLite's busy handler backs off for up to 100 ms, so a process that
  // re-takes the lock at once can starve its peer on a loaded machine.
  await new Promise((resolve) => setTimeout(resolve, 3));
}
process.stdout.write(`${JSON.stringify(claimed)}\n`);
await store.close();
