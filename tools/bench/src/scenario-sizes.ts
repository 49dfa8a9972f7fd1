/**
 * AGL 0.3's store benchmark scenarios (reference v0 §10, `.github/workflows/benchmark.yml`, all `batch` mode). Every
 * per-rollout value is kept; only the total task count is scaled down (`tasks` / `quickTasks`) so each size finishes in
 * a few minutes on 2 cores.
 */
export interface ScenarioSize {
  name: 'minimal' | 'medium' | 'large';
  /** AGL's total task count (for the record). */
  aglTotalTasks: number;
  /** Tasks this benchmark runs (full mode). */
  tasks: number;
  /** Tasks in `--quick` mode. */
  quickTasks: number;
  /** Rollouts enqueued per batch (AGL's value). */
  batchSize: number;
  /** Runner workers (AGL's value). */
  nRunners: number;
  /** `rounds = randint(1, maxRounds)` per rollout. */
  maxRounds: number;
  /** Each nested span and the final span sleep `U(0, sleepSeconds)`. */
  sleepSeconds: number;
}

export const SCENARIO_SIZES: readonly ScenarioSize[] = [
  {
    name: 'minimal',
    aglTotalTasks: 4096,
    tasks: 256,
    quickTasks: 64,
    batchSize: 256,
    nRunners: 32,
    maxRounds: 6,
    sleepSeconds: 0.5,
  },
  {
    name: 'medium',
    aglTotalTasks: 10_000,
    tasks: 1000,
    quickTasks: 300,
    batchSize: 1000,
    nRunners: 100,
    maxRounds: 10,
    sleepSeconds: 0.1,
  },
  {
    name: 'large',
    aglTotalTasks: 50_000,
    tasks: 8192,
    quickTasks: 2048,
    batchSize: 8192,
    nRunners: 1000,
    maxRounds: 3,
    sleepSeconds: 0.1,
  },
];

/** The size called `name`. */
export function scenarioSize(name: ScenarioSize['name']): ScenarioSize {
  const size = SCENARIO_SIZES.find((s) => s.name === name);
  if (!size) throw new Error(`unknown scenario size ${name}`);
  return size;
}
