import { cpus, totalmem } from 'node:os';

/** A JSON object tree of figures. */
export type ResultTree = { [key: string]: ResultValue };
export type ResultValue = number | string | boolean | null | ResultValue[] | ResultTree;

/** The keys issue #15 requires (numbers); `adapters.*` keys are checked per adapter found. */
export const REQUIRED_KEYS = [
  'store.large.sqliteHttp.rolloutsPerSecond',
  'store.large.embedded.rolloutsPerSecond',
  'ingest.addSpans.ratioToRawSqlite',
  'ingest.restBatch.ratioToRawSqlite',
  'ingest.otlpProtobuf.ratioToRawSqlite',
  'ingest.records.cpuMicrosPerRequest',
  'gateway.throughputRatio',
  'gateway.p50AddedMs',
  'training.demo.trainedReward',
  'memory.storeServerPeakRssMb',
  'machine.cores',
] as const;

/** Median (mean of the middle two for an even count); NaN for none. */
export function median(values: readonly number[]): number {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Sets `tree[a][b][c] = value` for the dotted path `a.b.c`, creating objects on the way. */
export function setPath(tree: ResultTree, path: string, value: ResultValue): void {
  const parts = path.split('.');
  let node = tree;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as ResultTree;
  }
  node[parts.at(-1)!] = value;
}

/** The value at a dotted path, or undefined. */
export function getPath(tree: ResultTree, path: string): ResultValue | undefined {
  let node: ResultValue | undefined = tree;
  for (const part of path.split('.')) {
    if (typeof node !== 'object' || node === null || Array.isArray(node)) return undefined;
    node = node[part];
  }
  return node;
}

/** Rounds to `digits` significant decimals for printing and storing (keeps integers as they are). */
export function round(value: number, digits = 3): number {
  if (!Number.isFinite(value)) return value;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** The machine the figures were measured on. */
export function machineInfo(): ResultTree {
  const list = cpus();
  return {
    cores: list.length,
    cpuModel: list[0]?.model ?? 'unknown',
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    totalMemoryMb: Math.round(totalmem() / 1024 / 1024),
  };
}

/**
 * Required keys whose value is not a finite number. `adapters` must hold at least one adapter, each with numeric
 * `cpuMicrosPerCall` and `overheadRatio`. A figure that could not be measured is `null` with a `...Reason` sibling.
 */
export function missingRequiredKeys(results: ResultTree): string[] {
  const missing: string[] = REQUIRED_KEYS.filter((key) => typeof getPath(results, key) !== 'number');
  const adapters = results.adapters;
  if (
    typeof adapters !== 'object' ||
    adapters === null ||
    Array.isArray(adapters) ||
    Object.keys(adapters).length === 0
  )
    missing.push('adapters.<name>');
  else
    for (const name of Object.keys(adapters)) {
      for (const key of ['cpuMicrosPerCall', 'overheadRatio'])
        if (typeof getPath(results, `adapters.${name}.${key}`) !== 'number') missing.push(`adapters.${name}.${key}`);
    }
  if (typeof getPath(results, 'machine.node') !== 'string') missing.push('machine.node');
  return missing;
}

/** One row of the printed table. */
export interface TableRow {
  figure: string;
  value: string;
  target?: string;
  note?: string;
}

/** A plain-text table with aligned columns. */
export function formatTable(rows: readonly TableRow[]): string {
  const header: TableRow = { figure: 'figure', value: 'value', target: 'target', note: 'note' };
  const all = [header, ...rows];
  const width = (key: keyof TableRow): number => Math.max(...all.map((r) => (r[key] ?? '').length));
  const w = { figure: width('figure'), value: width('value'), target: width('target') };
  const line = (r: TableRow): string =>
    `${r.figure.padEnd(w.figure)}  ${r.value.padStart(w.value)}  ${(r.target ?? '').padEnd(w.target)}  ${r.note ?? ''}`.trimEnd();
  const rule = '-'.repeat(Math.min(160, w.figure + w.value + w.target + 30));
  return [line(header), rule, ...rows.map(line)].join('\n');
}

/** Formats a number for the table ("n/a" when not a finite number). */
export function fmt(value: ResultValue | undefined, digits = 1, unit = ''): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return 'n/a';
  return `${value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 })}${unit}`;
}

/**
 * With `--only`, the sections this run did not measure keep the figures of the run that did (read from the earlier
 * `bench-results.json`), so the file holds the latest figure of every section. `sections.<name>` says when and in
 * which mode each section was measured.
 */
export function keepEarlierSections(
  results: ResultTree,
  earlier: ResultTree | null,
  measured: readonly string[],
  all: readonly string[],
): void {
  const stamps: ResultTree = {};
  const earlierStamps = (earlier?.sections ?? {}) as ResultTree;
  for (const name of all) {
    if (measured.includes(name)) {
      stamps[name] = { generatedAt: results.generatedAt as string, mode: results.mode as string };
    } else if (earlier && earlier[name] !== undefined) {
      results[name] = earlier[name] as ResultValue;
      stamps[name] =
        earlierStamps[name] ?? ({ generatedAt: earlier.generatedAt ?? null, mode: earlier.mode ?? null } as ResultTree);
    }
  }
  // `memory` is measured by the store section.
  if (!measured.includes('store') && earlier?.memory !== undefined) results.memory = earlier.memory;
  results.sections = stamps;
}
