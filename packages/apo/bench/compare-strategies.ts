/**
 * Compare APO's beam search with the reflective (GEPA-style) variant on the room-selector task, against the local
 * rule-based test LLM (deterministic, no network). `npm run bench -w packages/apo` (or `-- --seeds 5`).
 */
import { MemoryStore } from '@agl/store';
import { startOpenAiTestServer } from '@agl/testing';
import { runApo } from '../src/__fixtures__/run-apo';
import { roomSelectorRuleLlm as ruleLlm } from '@agl/testing';

const seedsArg = process.argv.indexOf('--seeds');
const nSeeds = seedsArg > 0 ? Number(process.argv[seedsArg + 1]) : 5;
const llm = await startOpenAiTestServer({ respond: ruleLlm });
const rows: string[][] = [];
const totals = new Map<string, { best: number; rollouts: number; calls: number; seconds: number; wins: number }>();
try {
  for (const strategy of ['beam', 'reflective'] as const) {
    const t = { best: 0, rollouts: 0, calls: 0, seconds: 0, wins: 0 };
    for (let seed = 1; seed <= nSeeds; seed += 1) {
      const store = new MemoryStore();
      const started = performance.now();
      const r = (await runApo({ store, baseURL: llm.baseURL, apoStrategy: strategy, seed })).result!;
      const seconds = (performance.now() - started) / 1000;
      const rollouts = (await store.queryRollouts({ limit: 0 })).total;
      t.best += r.bestScore;
      t.rollouts += rollouts;
      t.calls += r.usage.calls;
      t.seconds += seconds;
      if (r.bestScore > (r.seedScore ?? 0)) t.wins += 1;
      rows.push([
        strategy,
        String(seed),
        (r.seedScore ?? 0).toFixed(3),
        r.bestScore.toFixed(3),
        r.bestVersion,
        String(r.candidates.length),
        String(rollouts),
        String(r.usage.calls),
        seconds.toFixed(2),
      ]);
    }
    totals.set(strategy, t);
  }
} finally {
  await llm.close();
}
const header = ['strategy', 'seed', 'seed val', 'best val', 'best', 'candidates', 'rollouts', 'llm calls', 'seconds'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
console.log(line(header));
for (const r of rows) console.log(line(r));
console.log('');
for (const [strategy, t] of totals) {
  console.log(
    `${strategy}: mean best val ${(t.best / nSeeds).toFixed(3)}, beat the seed in ${t.wins}/${nSeeds}, mean rollouts ${(t.rollouts / nSeeds).toFixed(0)}, mean LLM calls ${(t.calls / nSeeds).toFixed(0)}, mean ${(t.seconds / nSeeds).toFixed(2)} s`,
  );
}
