// Child process: opens the file and prints what it holds as one JSON line.
import { SqliteStore } from '../index';

const path = process.argv[2]!;
const store = new SqliteStore({ path });
const rollouts = (await store.queryRollouts()).items;
const spans: Record<string, string[]> = {};
for (const r of rollouts) {
  const page = await store.querySpans({ rolloutId: r.rolloutId });
  if (page.total > 0) spans[r.rolloutId] = page.items.map((s) => s.spanId);
}
const resources = await store.getLatestResources();
const worker = await store.getWorkerById('crashy');
process.stdout.write(`${JSON.stringify({ rollouts: rollouts.map((r) => [r.rolloutId, r.status]), spans, resources, worker, journal: store.journalMode })}\n`);
await store.close();
