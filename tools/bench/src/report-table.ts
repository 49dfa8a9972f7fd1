import { isRecord } from '@agl/core/guards';
import { fmt, formatTable, getPath, type ResultTree, type TableRow } from './results';

const pct = (v: unknown): string => (typeof v === 'number' && Number.isFinite(v) ? `${(v * 100).toFixed(1)} %` : 'n/a');
const reason = (results: ResultTree, path: string): string | undefined => {
  const r = path === '' ? results.reason : getPath(results, `${path}.reason`);
  return typeof r === 'string' ? r.slice(0, 100) : undefined;
};

/** The printed table of every headline figure. */
export function reportTable(results: ResultTree): string {
  const rows: TableRow[] = [];
  for (const size of ['minimal', 'medium', 'large']) {
    for (const [backend, label, target] of [
      ['embedded', 'embedded (SQLite file, runner workers on a thread per core)', size === 'large' ? '≥ 1,000' : ''],
      ['embeddedOneThread', 'embedded, runners and algorithm on one thread', ''],
      ['sqliteHttp', 'HTTP + SQLite (runner processes)', size === 'large' ? '≥ 300 (stretch 1,000)' : ''],
      ['postgresHttp', 'HTTP + PostgreSQL', ''],
    ] as const) {
      const base = `store.${size}.${backend}`;
      if (getPath(results, base) === undefined) continue;
      const cpu = getPath(results, `${base}.rolloutsPerCpuSecond`);
      rows.push({
        figure: `store ${size}: ${label}`,
        value: `${fmt(getPath(results, `${base}.rolloutsPerSecond`))} rollouts/s`,
        target,
        note:
          reason(results, base) ??
          (typeof cpu === 'number'
            ? `${fmt(cpu)} rollouts per CPU-second, ${fmt(getPath(results, `${base}.tasks`), 0)} tasks`
            : undefined),
      });
    }
  }
  for (const [key, label, target] of [
    ['addSpans', 'ingest addSpans', '≥ 0.5'],
    ['restBatch', 'ingest REST batch', '≥ 0.3'],
    ['otlpProtobuf', 'ingest OTLP protobuf', '≥ 0.25'],
  ] as const) {
    rows.push({
      figure: `${label} / raw SQLite`,
      value: fmt(getPath(results, `ingest.${key}.ratioToRawSqlite`), 2),
      target,
      note:
        reason(results, 'ingest') ??
        `${fmt(getPath(results, `ingest.${key}.spansPerSecond`), 0)} spans/s (raw: ${fmt(getPath(results, 'ingest.rawSqlite.spansPerSecond'), 0)})`,
    });
  }
  if (getPath(results, 'ingest.records') !== undefined) {
    const pg = getPath(results, 'ingest.records.postgres.cpuMicrosPerRequest');
    rows.push({
      figure: 'ingest records: store CPU per recorded request (SQLite)',
      value: `${fmt(getPath(results, 'ingest.records.cpuMicrosPerRequest'), 0)} µs`,
      target: '≤ 100',
      note:
        reason(results, 'ingest.records') ??
        `start, spans, end as the recorder sends them; PostgreSQL ${typeof pg === 'number' ? `${fmt(pg, 0)} µs` : 'not run'}`,
    });
  }
  const adapters = getPath(results, 'adapters');
  if (isRecord(adapters)) {
    for (const name of Object.keys(adapters)) {
      rows.push({
        figure: `adapter ${name}: CPU per traced call`,
        value: `${fmt(getPath(results, `adapters.${name}.cpuMicrosPerCall`), 0)} µs`,
        note:
          reason(results, `adapters.${name}`) ??
          `×${fmt(getPath(results, `adapters.${name}.overheadRatio`), 2)} of untraced (${fmt(getPath(results, `adapters.${name}.untracedCpuMicrosPerCall`), 0)} µs)`,
      });
    }
  }
  // The bare pass-through proxy measured in the same rounds: what any Node proxy gets on this machine.
  const floor = (key: string, text: (v: number) => string): string | undefined => {
    const v = getPath(results, `gateway.${key}`);
    return typeof v === 'number' ? `bare pass-through proxy: ${text(v)}` : undefined;
  };
  rows.push({
    figure: 'gateway throughput / direct',
    value: pct(getPath(results, 'gateway.throughputRatio')),
    target: '≥ 85 %',
    note: reason(results, 'gateway') ?? floor('passthroughThroughputRatio', pct),
  });
  rows.push({
    figure: 'gateway added p50 (concurrency 1)',
    value: `${fmt(getPath(results, 'gateway.p50AddedMs'), 3)} ms`,
    target: '< 1 ms',
    note: floor('passthroughP50AddedMs', (v) => `${fmt(v, 3)} ms`),
  });
  rows.push({ figure: 'gateway CPU per call', value: `${fmt(getPath(results, 'gateway.cpuMicrosPerCall'), 0)} µs` });
  const observeNote = reason(results, 'observe');
  rows.push({
    figure: 'live service CPU added, AGL / OpenTelemetry',
    value: fmt(getPath(results, 'observe.serviceCpuRatioToPeer'), 3),
    target: '≤ 0.8',
    note:
      observeNote ??
      `service µs/request over plain: AGL +${fmt(getPath(results, 'observe.serviceCpuAddedMicros'), 0)}, ` +
        `OpenTelemetry recording prompts +${fmt(getPath(results, 'observe.peerServiceCpuAddedMicros'), 0)} ` +
        `(c=16, 5 ms LLM; load average ${fmt(getPath(results, 'observe.loadAverage.median'), 1)})`,
  });
  rows.push({
    figure: 'live service: store CPU per recorded request',
    value: `${fmt(getPath(results, 'observe.storeCpuMicrosPerRequest'), 0)} µs`,
    target: '≤ 100 µs',
  });
  rows.push({
    figure: 'live service RSS added by AGL',
    value: `${fmt(getPath(results, 'observe.serviceRssAddedMb'), 1)} MB`,
    target: '≤ 30 MB',
    note: `OpenTelemetry: +${fmt(getPath(results, 'observe.peerServiceRssAddedMb'), 1)} MB`,
  });
  rows.push({
    figure: 'live service added p50 (concurrency 1)',
    value: `${fmt(getPath(results, 'observe.p50AddedMs'), 3)} ms`,
    target: '≤ 0.15 ms',
    note: `OpenTelemetry: ${fmt(getPath(results, 'observe.peerP50AddedMs'), 3)} ms`,
  });
  rows.push({
    figure: 'live service peak RSS, store down',
    value: `${fmt(getPath(results, 'observe.storeDown.peakRssMb'), 0)} MB`,
    target: `< ${fmt(getPath(results, 'observe.storeDown.budgetMb'), 0)} MB`,
    note: `${fmt(getPath(results, 'observe.storeDown.seconds'), 0)} s down; ${fmt(getPath(results, 'observe.storeDown.rssBeforeMb'), 0)} MB before; +${fmt(getPath(results, 'observe.storeDown.overUnrecordedMb'), 0)} MB over the unrecorded peak`,
  });
  if (getPath(results, 'traffic.rollouts') !== undefined) {
    const n = `${fmt(getPath(results, 'traffic.rollouts'), 0)} rollouts, ${fmt(getPath(results, 'traffic.windowDays'), 0)}-day window`;
    rows.push({
      figure: 'traffic poll (uncached), median / p95',
      value: `${fmt(getPath(results, 'traffic.pollMs.median'), 0)} / ${fmt(getPath(results, 'traffic.pollMs.p95'), 0)} ms`,
      target: '≤ 200 ms',
      note: reason(results, 'traffic') ?? `${n}; cached ${fmt(getPath(results, 'traffic.cachedPollMs.median'), 1)} ms`,
    });
    rows.push({
      figure: 'traffic: health under 4 pollers, p95',
      value: `${fmt(getPath(results, 'traffic.underLoad.healthMsP95'), 1)} ms`,
      target: '≤ 50 ms',
      note: `median ${fmt(getPath(results, 'traffic.underLoad.healthMsMedian'), 1)} ms, max ${fmt(getPath(results, 'traffic.underLoad.healthMsMax'), 1)} ms; poll p95 under load ${fmt(getPath(results, 'traffic.underLoad.pollMsP95'), 0)} ms`,
    });
    rows.push({
      figure: 'traffic: store server peak RSS',
      value: `${fmt(getPath(results, 'traffic.peakRssMb'), 0)} MiB`,
      target: '≤ 300 MiB',
      note: n,
    });
  }
  const seeds = getPath(results, 'training.demo.seeds');
  for (const seed of [1, 2, 3]) {
    const found = Array.isArray(seeds) ? seeds[seed - 1] : undefined;
    const entry: ResultTree = isRecord(found) ? (found as ResultTree) : {};
    const stale = entry.stale === true ? 'stale: last summary, not rerun' : undefined;
    rows.push({
      figure: `training: Calc-X demo (defaults), seed ${seed}`,
      value: fmt(entry.trainedReward, 3),
      target: '≥ 0.8 from ≤ 0.3 in 600 s',
      note:
        (reason(entry, '') || reason(results, 'training.demo')) ??
        [
          `before RL ${fmt(entry.baselineReward, 3)}, ${fmt(entry.seconds, 0)} s, load average ${fmt(entry.loadAverage, 1)}`,
          stale,
        ]
          .filter(Boolean)
          .join('; '),
    });
  }
  rows.push({
    figure: 'memory: store server peak RSS (large, HTTP)',
    value: `${fmt(getPath(results, 'memory.storeServerPeakRssMb'), 0)} MB`,
    target: '≤ 500 MB',
  });
  rows.push({
    figure: 'memory: SQLite bytes per stored span',
    value: `${fmt(getPath(results, 'memory.sqliteBytesPerSpan'), 0)} B`,
  });
  return formatTable(rows);
}
