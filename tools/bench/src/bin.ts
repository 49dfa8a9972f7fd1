/**
 * `npm run bench [-- --quick] [--with-training] [--only store,ingest,adapters,gateway,observe,training,traffic]
 * [--traffic-rollouts n] [--out file]`:
 * every AGL benchmark in sequence, a table on stdout, the figures in `bench-results.json` at the repo root and the
 * artefacts (CPU profile, sub-bench logs) in `bench-artifacts/`.
 */
import { setMaxListeners } from 'node:events';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { REPO_ROOT } from './child-processes';
import { runIngestBench } from './ingest-bench';
import { runRecordsIngestBench } from './records-ingest-bench';
import { runObserveBench } from './observe-bench';
import { reportTable } from './report-table';
import { keepEarlierSections, machineInfo, missingRequiredKeys, round, type ResultTree } from './results';
import { runStoreBenchmarks } from './store-benchmarks';
import { runAdapterBenches, runGatewayBench } from './sub-benches';
import { runTrafficBench } from './traffic-bench';
import { trainingFigures } from './training-figures';

const SECTIONS = ['store', 'ingest', 'adapters', 'gateway', 'observe', 'training', 'traffic'] as const;
type Section = (typeof SECTIONS)[number];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'with-training': { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
    'large-repeats': { type: 'string' },
    'traffic-rollouts': { type: 'string' },
  },
});
const quick = values.quick === true;
const only = values.only ? (values.only.split(',').map((s) => s.trim()) as Section[]) : [...SECTIONS];
for (const s of only)
  if (!SECTIONS.includes(s)) throw new Error(`--only ${s}: unknown section; use any of ${SECTIONS.join(', ')}`);
const out = resolve(process.env.INIT_CWD ?? REPO_ROOT, values.out ?? join(REPO_ROOT, 'bench-results.json'));
const artifactsDir = join(REPO_ROOT, 'bench-artifacts');
mkdirSync(artifactsDir, { recursive: true });
// The runner gives each of its 1,000 workers an abort listener on one signal.
setMaxListeners(5000);

const started = Date.now();
const log = (line: string): void =>
  console.log(`[bench ${((Date.now() - started) / 1000).toFixed(0).padStart(4)}s] ${line}`);
const results: ResultTree = {
  generatedAt: new Date().toISOString(),
  mode: quick ? 'quick' : 'full',
  machine: { ...machineInfo(), loadAverageAtStart: loadavg().map((v) => round(v, 2)) },
  store: {},
  ingest: {},
  adapters: {},
  gateway: {},
  observe: {},
  training: { demo: {} },
  traffic: {},
  memory: {},
};
// `--only` keeps the other sections' latest figures from the file it rewrites.
const earlier =
  values.only && existsSync(out) ? (JSON.parse(readFileSync(out, 'utf8')) as ResultTree) : (null as ResultTree | null);
keepEarlierSections(results, earlier, only, SECTIONS);
const save = (): void => writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
let failed = false;

async function section(name: Section, fn: () => Promise<void>): Promise<void> {
  if (!only.includes(name)) return;
  log(`── ${name}`);
  try {
    await fn();
  } catch (error) {
    failed = true;
    log(`✗ ${name} failed: ${(error as Error).stack ?? String(error)}`);
    results[name] = { ...(results[name] as ResultTree), error: (error as Error).message };
  }
  save();
}

await section('store', async () => {
  const { store, memory } = await runStoreBenchmarks({
    quick,
    largeRepeats: Number(values['large-repeats'] ?? (quick ? 1 : 3)),
    artifactsDir,
    log,
    onPartial: (partial) => {
      results.store = partial.store;
      results.memory = partial.memory;
      save();
    },
  });
  results.store = store;
  results.memory = memory;
});
await section('ingest', async () => {
  const dir = join(tmpdir(), `agl-bench-ingest-${process.pid}`);
  try {
    results.ingest = {
      ...(await runIngestBench({ dir, repeats: quick ? 1 : 5, spans: 10_000, log })),
    } as unknown as ResultTree;
    save();
    // What recording costs the store: the real recorder's batches replayed to `agl store serve`.
    try {
      results.ingest.records = (await runRecordsIngestBench({
        dir,
        requests: quick ? 1500 : 4000,
        repeats: quick ? 3 : 5,
        log,
      })) as unknown as ResultTree;
    } catch (error) {
      log(`✗ ingest.records failed: ${(error as Error).stack ?? String(error)}`);
      results.ingest.records = { cpuMicrosPerRequest: null, reason: (error as Error).message };
      failed = true;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
await section('adapters', async () => {
  results.adapters = await runAdapterBenches({ artifactsDir, calls: quick ? 2000 : undefined, log });
});
await section('gateway', async () => {
  results.gateway = await runGatewayBench({ artifactsDir, quick, log });
});
await section('observe', async () => {
  results.observe = await runObserveBench({ quick, log });
});
await section('training', async () => {
  const run = values['with-training'] === true || process.env.AGL_BENCH_TRAINING === '1';
  results.training = { demo: await trainingFigures({ artifactsDir, run, log }) };
});
await section('traffic', async () => {
  const rollouts = Number(values['traffic-rollouts'] ?? (quick ? 100_000 : 1_000_000));
  if (!Number.isInteger(rollouts) || rollouts < 1)
    throw new Error(`--traffic-rollouts ${values['traffic-rollouts']}: use a whole number of rollouts ≥ 1`);
  results.traffic = await runTrafficBench({ rollouts, polls: quick ? 10 : 30, loadSeconds: quick ? 5 : 15, log });
});

results.machine = { ...(results.machine as ResultTree), loadAverageAtEnd: loadavg().map((v) => round(v, 2)) };
results.durationSeconds = round((Date.now() - started) / 1000, 1);
save();
console.log('');
console.log(reportTable(results));
console.log('');
const missing = missingRequiredKeys(results);
if (missing.length > 0)
  console.log(`not measured in this run (null, see the reason in the JSON): ${missing.join(', ')}`);
console.log(`figures: ${out}; artefacts: ${artifactsDir}`);
console.log(
  `machine: ${(results.machine as ResultTree).cores} cores, Node ${process.version}, load average at start ${JSON.stringify((results.machine as ResultTree).loadAverageAtStart)}`,
);
process.exit(failed ? 1 : 0);
