/**
 * Child process for tracer-store.test.ts: emits spans into a rollout of a SQLite store and then either returns
 * (beforeExit flush) or waits for SIGTERM/SIGINT (signal flush). It never flushes by itself: the export delay is a
 * minute, so only the exit hooks can save the spans.
 *
 * Usage: node --conditions=@agl/source --import tsx tracer-exit-child.ts <db> <rolloutId> <attemptId> <exit|signal>
 */
import { AglTracer, emitMessage, emitReward, withRolloutContext } from '@agl/core/tracer';
import { SqliteStore } from '@agl/store/sqlite';

const [db, rolloutId, attemptId, mode] = process.argv.slice(2) as [string, string, string, string];
const store = new SqliteStore({ path: db });
const tracer = new AglTracer({ scheduledDelayMillis: 60_000 });
tracer.register();

withRolloutContext({ rolloutId, attemptId, store, tracer }, () => {
  emitMessage(`hello from ${mode}`);
  emitReward(0.75);
});

if (tracer.stats().exported !== 0) throw new Error('exported before exit: the test would prove nothing');
if (mode === 'signal') {
  setInterval(() => undefined, 1_000);
  process.stdout.write('READY\n');
}
