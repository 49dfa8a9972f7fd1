// Child process: writes to a SqliteStore, prints every acknowledged write, then dies without closing (SIGKILL).
import { SqliteStore } from '../index';

const path = process.argv[2]!;
const store = new SqliteStore({ path });
const rollouts = await store.enqueueRollouts(Array.from({ length: 20 }, (_, i) => ({ input: { i }, metadata: { task_id: `t${i}` } })));
process.stdout.write(`ACK ${JSON.stringify({ rollouts: rollouts.map((r) => r.rolloutId) })}\n`);
const claimed = await store.dequeueRollout({ workerId: 'crashy' });
const spanIds: string[] = [];
for (let i = 0; i < 5; i++) {
  const batch = Array.from({ length: 10 }, (_, j) => ({
    rolloutId: claimed!.rolloutId,
    attemptId: claimed!.attempt.attemptId,
    sequenceId: i * 10 + j + 1,
    traceId: 't'.repeat(32),
    spanId: `s-${i}-${j}`,
    parentId: null,
    name: 'work',
    startTime: 1,
    endTime: 2,
    attributes: { i, j },
  }));
  const inserted = await store.addSpans(batch);
  spanIds.push(...inserted.map((s) => s.spanId));
}
await store.updateResources('main', { p: { resourceType: 'prompt_template', template: 'x {y}' } });
process.stdout.write(`ACK ${JSON.stringify({ claimed: claimed!.rolloutId, attempt: claimed!.attempt.attemptId, spans: spanIds })}\n`);
process.kill(process.pid, 'SIGKILL');
