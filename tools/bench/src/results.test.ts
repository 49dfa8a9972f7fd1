import { describe, expect, it } from 'vitest';
import { reportTable } from './report-table';
import {
  REQUIRED_KEYS,
  formatTable,
  keepEarlierSections,
  median,
  missingRequiredKeys,
  setPath,
  type ResultTree,
} from './results';

function complete(): ResultTree {
  const r: ResultTree = {};
  for (const key of REQUIRED_KEYS) setPath(r, key, 1.5);
  setPath(r, 'machine.node', process.version);
  setPath(r, 'adapters.openai.cpuMicrosPerCall', 300);
  setPath(r, 'adapters.openai.overheadRatio', 1.6);
  return r;
}

describe('bench-results.json shape', () => {
  it('accepts a result with every required numeric key', () => {
    expect(missingRequiredKeys(complete())).toEqual([]);
  });

  it('names each missing or non-numeric key, per adapter too', () => {
    const r = complete();
    setPath(r, 'gateway.throughputRatio', null);
    setPath(r, 'adapters.langchain.cpuMicrosPerCall', 10);
    delete (r.store as ResultTree).large;
    expect(missingRequiredKeys(r)).toEqual([
      'store.large.sqliteHttp.rolloutsPerSecond',
      'store.large.embedded.rolloutsPerSecond',
      'gateway.throughputRatio',
      'adapters.langchain.overheadRatio',
    ]);
    expect(missingRequiredKeys({ machine: { cores: 2 } })).toContain('adapters.<name>');
  });

  it('with --only, keeps the sections it did not measure from the earlier file, with when they were measured', () => {
    const earlier: ResultTree = {
      generatedAt: '2026-12-01T00:00:00.000Z',
      mode: 'full',
      store: { large: { embedded: { rolloutsPerSecond: 900 } } },
      memory: { storeServerPeakRssMb: 120 },
      traffic: { pollMs: { median: 1784 } },
    };
    const now: ResultTree = { generatedAt: '2026-12-07T00:00:00.000Z', mode: 'quick', store: {}, traffic: {} };
    keepEarlierSections(now, earlier, ['traffic'], ['store', 'traffic', 'observe']);
    expect(now.store).toEqual(earlier.store);
    expect(now.memory).toEqual(earlier.memory);
    expect(now.traffic).toEqual({});
    expect(now.sections).toEqual({
      store: { generatedAt: '2026-12-01T00:00:00.000Z', mode: 'full' },
      traffic: { generatedAt: '2026-12-07T00:00:00.000Z', mode: 'quick' },
    });
  });

  it('takes medians (even counts average the middle two, non-numbers ignored)', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([NaN, 5])).toBe(5);
    expect(median([])).toBeNaN();
  });

  it('prints one aligned table row per figure, with n/a and the reason for a missing one', () => {
    const r = complete();
    setPath(r, 'training.demo', { trainedReward: null, reason: 'not run: pass --with-training' });
    const table = reportTable(r);
    expect(table).toMatch(/store large: embedded .* 1\.5 rollouts\/s/);
    expect(table).toMatch(
      /training: Calc-X demo \(defaults\), seed 1 +n\/a +≥ 0\.8 from ≤ 0\.3 in 600 s +not run: pass --with-training/,
    );
    expect(table).toMatch(/adapter openai: CPU per traced call +300 µs/);
    // Without the pass-through figures the gateway rows carry no note; with them, the floor is shown beside each.
    expect(table).toMatch(/gateway added p50 \(concurrency 1\) +1\.5 ms +< 1 ms *\n/);
    setPath(r, 'gateway.passthroughThroughputRatio', 0.82);
    setPath(r, 'gateway.passthroughP50AddedMs', 0.92);
    const withFloor = reportTable(r);
    expect(withFloor).toMatch(/gateway throughput \/ direct +150\.0 % +≥ 85 % +bare pass-through proxy: 82\.0 %/);
    expect(withFloor).toMatch(
      /gateway added p50 \(concurrency 1\) +1\.5 ms +< 1 ms +bare pass-through proxy: 0\.92 ms/,
    );
    // The live-service rows: AGL's added service CPU against the OpenTelemetry peer's, the store's CPU, RSS.
    setPath(r, 'observe.serviceCpuRatioToPeer', 0.75);
    setPath(r, 'observe.serviceCpuAddedMicros', 180);
    setPath(r, 'observe.peerServiceCpuAddedMicros', 240);
    setPath(r, 'observe.storeCpuMicrosPerRequest', 95);
    expect(reportTable(r)).toMatch(
      /live service CPU added, AGL \/ OpenTelemetry +0\.75 +≤ 0\.8 +service µs\/request over plain: AGL \+180, OpenTelemetry recording prompts \+240/,
    );
    expect(reportTable(r)).toMatch(/live service: store CPU per recorded request +95 µs +≤ 100 µs/);
    const lines = formatTable([
      { figure: 'a', value: '1' },
      { figure: 'long figure', value: '100' },
    ]).split('\n');
    expect(lines[2]!.indexOf('1')).toBe(lines[3]!.indexOf('100') + 2);
  });
});
