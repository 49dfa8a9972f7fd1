import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { Span, SpanInput } from '../schema/index';
import type { LightningStore } from '../store/index';
import { AglTracer } from './agl-tracer';
import { exportSpansSync, STORE_REOPEN, type StoreReopenSpec } from './exit-export';
import { withRolloutContext } from './rollout-context';

// A store module the exporter thread can import (core cannot use @agl/store): it numbers spans and appends them to a
// JSON-lines file, or never answers when `hang` is set.
const dir = mkdtempSync(join(tmpdir(), 'agl-exit-export-'));
const moduleFile = join(dir, 'file-store.mjs');
writeFileSync(
  moduleFile,
  `import { appendFileSync } from 'node:fs';
export class FileStore {
  constructor(options) { this.options = options; }
  async getNextSpanSequenceIds(pairs) { return pairs.map((_, i) => 100 + i); }
  async addSpans(spans) {
    if (this.options.hang) return new Promise(() => {});
    for (const span of spans) appendFileSync(this.options.file, JSON.stringify(span) + '\\n');
    return spans;
  }
}
`,
);
const spec = (file: string, hang = false): StoreReopenSpec => ({
  module: pathToFileURL(moduleFile).href,
  exportName: 'FileStore',
  options: { file, hang },
});
const readSpans = (file: string): SpanInput[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as SpanInput);

/** A store whose async methods never settle (the process is exiting) but which a worker can reopen. */
function exitingStore(file: string): LightningStore {
  const never = () => new Promise<never>(() => undefined);
  return {
    getNextSpanSequenceIds: never,
    addSpans: never,
    [STORE_REOPEN]: () => spec(file),
  } as unknown as LightningStore;
}

describe('exit export', () => {
  it('exportSpansSync hands spans to a worker thread and returns once they are stored', () => {
    const file = join(dir, 'sync.jsonl');
    const span = { rolloutId: 'ro-1', attemptId: 'at-1', sequenceId: 0, spanId: 'a' } as unknown as SpanInput;
    expect(exportSpansSync([{ spec: spec(file), spans: [span] }], 10_000)).toBeNull();
    expect(readSpans(file)).toEqual([{ ...span, sequenceId: 100 }]);
  });

  it('gives up after the timeout when the store does not answer', () => {
    const started = performance.now();
    const error = exportSpansSync([{ spec: spec(join(dir, 'hang.jsonl'), true), spans: [{} as SpanInput] }], 300);
    expect(error).toBe('the store did not answer within 300 ms');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('closes the open spans with an error and exports everything pending synchronously', () => {
    const file = join(dir, 'pending.jsonl');
    const tracer = new AglTracer({ exitHooks: false, logger: { warn: () => undefined } });
    const ctx = { rolloutId: 'ro-1', attemptId: 'at-1', store: exitingStore(file) };
    withRolloutContext(ctx, () => {
      const agent = tracer.getTracer().startSpan('agent');
      tracer.getTracer().startSpan('llm').end(); // ended, still queued
      void agent; // left open: the process "exits" now
    });
    expect(tracer.processor.closeOpenSpans('the process exited with code 1 before the span ended')).toBe(1);
    expect(tracer.processor.exportPendingSync(10_000)).toBe(2);
    const stored = readSpans(file);
    expect(stored.map((s) => [s.name, s.status?.statusCode])).toEqual([
      ['llm', 'UNSET'],
      ['agent', 'ERROR'],
    ]);
    expect(stored[1]!.status?.description).toBe('the process exited with code 1 before the span ended');
    expect(tracer.stats()).toMatchObject({ queued: 0, exported: 2 });
  });

  it('a failed rollout closes only its own open spans', async () => {
    const stored: Span[] = [];
    let next = 0;
    const store = {
      getNextSpanSequenceIds: async (pairs: unknown[]) => pairs.map(() => (next += 1)),
      addSpans: async (spans: SpanInput[]) => (stored.push(...(spans as Span[])), spans as Span[]),
    } as unknown as LightningStore;
    const tracer = new AglTracer({ exitHooks: false });
    const failed = { rolloutId: 'ro-failed', attemptId: 'at-1', store };
    const other = { rolloutId: 'ro-other', attemptId: 'at-1', store };
    withRolloutContext(failed, () => void tracer.getTracer().startSpan('failed-agent'));
    const live = withRolloutContext(other, () => tracer.getTracer().startSpan('other-agent'));
    expect(tracer.closeOpenSpans('the rollout failed: boom', failed)).toBe(1);
    await tracer.forceFlush();
    expect(stored.map((s) => [s.rolloutId, s.name, s.status?.statusCode])).toEqual([
      ['ro-failed', 'failed-agent', 'ERROR'],
    ]);
    live.end();
    await tracer.forceFlush();
    expect(stored).toHaveLength(2);
    await tracer.shutdown();
  });
});
