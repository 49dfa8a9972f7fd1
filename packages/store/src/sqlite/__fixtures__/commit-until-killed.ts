// Child process: commits `full` large span batches (many rows, many MiB per transaction) to a SqliteStore, then starts
// one more and SIGKILLs itself inside that transaction, right after its `killAt`-th row insert (so before its COMMIT).
// Prints `ACK <n>` once batch n is committed. Args: <path> <first batch number> <rows per batch> <full batches> <killAt>.
import Database from 'better-sqlite3';
import { SqliteStore } from '../index';

const [path, first, size, full, killAt] = [process.argv[2]!, ...process.argv.slice(3).map(Number)] as [
  string,
  number,
  number,
  number,
  number,
];

// Count span inserts across every better-sqlite3 statement; die at the chosen one of the last batch.
const statement = Object.getPrototypeOf(new Database(':memory:').prepare('SELECT 1')) as {
  run: (...args: unknown[]) => unknown;
};
const run = statement.run;
let spanInserts = 0;
statement.run = function (this: { source: string }, ...args: unknown[]) {
  if (/\bINTO spans\b/.test(this.source) && ++spanInserts === full * size + killAt)
    process.kill(process.pid, 'SIGKILL');
  return run.apply(this, args);
};

const store = new SqliteStore({ path });
const rollout = await store.startRollout({ input: { first } });
const payload = 'p'.repeat(8000);
for (let batch = first; batch <= first + full; batch += 1) {
  const spans = Array.from({ length: size }, (_, j) => ({
    rolloutId: rollout.rolloutId,
    attemptId: rollout.attempt.attemptId,
    sequenceId: (batch - first) * size + j + 1,
    traceId: 't'.repeat(32),
    spanId: `b${batch}-${j}`,
    parentId: null,
    name: 'work',
    startTime: 1,
    endTime: 2,
    attributes: { batch, j, payload },
  }));
  await store.addSpans(spans);
  process.stdout.write(`ACK ${batch}\n`);
}
