import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { createStoreServer } from '@agl/store/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  configureObserve,
  flushObserve,
  observe,
  observedRollout,
  observeHandler,
  observeStats,
  shutdownObserve,
} from '../index';

function llmSpan(prompt: string): void {
  getAglTracer()
    .getTracer('test')
    .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttribute('gen_ai.prompt.0.content', prompt);
      span.setAttribute('gen_ai.completion.0.content', 'ok');
      span.end();
    });
}

async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message) };

describe('production behaviour of the recorder', () => {
  let dir: string;
  beforeEach(() => {
    warnings.length = 0;
    dir = mkdtempSync(join(tmpdir(), 'agl-observe-prod-'));
  });
  afterEach(async () => {
    await shutdownObserve(500);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a store that is down costs the request nothing; records wait and drain in order once it is up', async () => {
    const store = new SqliteStore({ path: join(dir, 's.sqlite') });
    const probe = await createStoreServer({ store, port: 0 });
    const port = Number(new URL(probe.url).port);
    await probe.close();
    configureObserve({ store: `http://127.0.0.1:${port}`, logger });
    const ids: string[] = [];
    const started = performance.now();
    for (let i = 0; i < 20; i += 1) {
      const answer = await observe({ input: { i } }, async (rollout) => {
        ids.push(rollout.rolloutId);
        llmSpan(`down-${i}`);
        return i;
      });
      expect(answer).toBe(i);
    }
    // the 20 requests never waited on the unreachable store (only the first waits <= 100 ms for resources)
    expect(performance.now() - started).toBeLessThan(1_500);
    await until(() => observeStats().failedExports > 0, 'a failed export');
    expect(observeStats().buffered).toBeGreaterThan(0);
    expect(warnings.filter((w) => w.includes('could not export'))).toHaveLength(1);
    const server = await createStoreServer({ store, port });
    try {
      expect(await flushObserve(10_000)).toBe(true);
      for (const [i, id] of ids.entries()) {
        const rollout = await store.getRolloutById(id);
        expect(rollout).toMatchObject({ status: 'succeeded', input: { i }, metadata: { source: 'production' } });
        const spans = (await store.querySpans({ rolloutId: id })).items;
        expect(spans.map((s) => s.attributes['gen_ai.prompt.0.content'])).toEqual([`down-${i}`]);
      }
      expect(observeStats()).toMatchObject({ recorded: 20, dropped: 0, buffered: 0, rejected: 0 });
    } finally {
      await server.close();
    }
  });

  it('past the buffer bound whole rollouts are dropped and counted, with one warning; the app sees nothing', async () => {
    configureObserve({ store: 'http://127.0.0.1:9', maxBufferedRecords: 6, logger });
    for (let i = 0; i < 10; i += 1) {
      expect(await observe({ input: i }, async () => (llmSpan(`b-${i}`), i))).toBe(i);
      await until(() => observeStats().buffered === Math.min(6, 3 * (i + 1)), `rollout ${i} queued`);
    }
    const stats = observeStats();
    // each rollout is start + spans + end; 6 records hold two rollouts whole, the rest are dropped whole
    expect(stats.recorded).toBe(2);
    expect(stats.dropped).toBe(8);
    expect(stats.droppedSpans).toBe(0);
    expect(warnings.filter((w) => w.includes('buffer is full'))).toHaveLength(1);
  });

  it('sampleRate 0 records nothing and counts it; an invalid AGL_SAMPLE_RATE warns once and records everything', async () => {
    const store = new MemoryStore();
    configureObserve({ store, sampleRate: 0, logger });
    for (let i = 0; i < 5; i += 1) {
      await observe({ input: i }, async (rollout) => {
        expect(rollout.recorded).toBe(false);
        llmSpan('sampled-out');
      });
    }
    await flushObserve();
    expect(observeStats()).toMatchObject({ recorded: 0, sampledOut: 5, unscoped: 0 });
    expect((await store.queryRollouts()).items).toHaveLength(0);
    process.env.AGL_SAMPLE_RATE = 'lots';
    try {
      configureObserve({ store, logger });
      configureObserve({ store, logger });
    } finally {
      delete process.env.AGL_SAMPLE_RATE;
    }
    expect(warnings.filter((w) => w.includes('AGL_SAMPLE_RATE="lots"'))).toHaveLength(1);
    await observe({}, async () => llmSpan('all'));
    await flushObserve();
    expect(observeStats()).toMatchObject({ recorded: 1, sampledOut: 0 });
  });

  it('sampleRate 0.25 records about a quarter of the requests, and the others leave nothing', async () => {
    const store = new MemoryStore();
    configureObserve({ store, sampleRate: 0.25, logger });
    for (let i = 0; i < 400; i += 1) await observe({ input: i }, async () => llmSpan(`s-${i}`));
    await flushObserve();
    const { recorded, sampledOut } = observeStats();
    expect(recorded + sampledOut).toBe(400);
    expect(recorded).toBeGreaterThanOrEqual(70);
    expect(recorded).toBeLessThanOrEqual(130);
    expect((await store.queryRollouts()).items).toHaveLength(recorded);
    for (const rollout of (await store.queryRollouts()).items)
      expect((await store.querySpans({ rolloutId: rollout.rolloutId })).items).toHaveLength(1);
  });

  it('redacts bearer tokens and API keys in prompts and completions by default; a redact option sees every span', async () => {
    const store = new MemoryStore();
    configureObserve({ store, logger });
    const { rolloutId } = await observe({}, async (rollout) => {
      llmSpan('my key is sk-abcdefghijklmnop1234 and header Bearer eyJhbGciOi.abc.def, url ?api_key=s3cr3tvalue&x=1');
      return rollout;
    });
    await flushObserve();
    const [span] = (await store.querySpans({ rolloutId })).items;
    expect(span!.attributes['gen_ai.prompt.0.content']).toBe(
      'my key is [REDACTED] and header Bearer [REDACTED], url ?api_key=[REDACTED]&x=1',
    );
    const seen: string[] = [];
    configureObserve({
      store,
      logger,
      redact: (attributes, s) => {
        seen.push(s.name);
        return { ...attributes, 'gen_ai.prompt.0.content': 'gone' };
      },
    });
    const second = await observe({}, async (rollout) => (llmSpan('secret'), rollout));
    await flushObserve();
    expect(seen).toEqual([SPAN_CHAT_COMPLETION]);
    const [redacted] = (await store.querySpans({ rolloutId: second.rolloutId })).items;
    expect(redacted!.attributes['gen_ai.prompt.0.content']).toBe('gone');
  });

  it('an LLM call outside any rollout becomes a one-call rollout; with unscoped: false it is counted and warned once', async () => {
    const store = new MemoryStore();
    configureObserve({ store, logger, agentName: 'svc' });
    llmSpan('loose call');
    getAglTracer()
      .getTracer('test')
      .startActiveSpan('not-an-llm-call', (span) => span.end());
    await flushObserve();
    const rollouts = (await store.queryRollouts()).items;
    expect(rollouts).toHaveLength(1);
    expect(rollouts[0]).toMatchObject({ mode: null, status: 'succeeded', metadata: { source: 'unscoped' } });
    const spans = (await store.querySpans({ rolloutId: rollouts[0]!.rolloutId })).items;
    expect(spans.map((s) => s.attributes['gen_ai.prompt.0.content'])).toEqual(['loose call']);
    expect(observeStats()).toMatchObject({ unscoped: 1, recorded: 1 });

    const other = new MemoryStore();
    configureObserve({ store: other, logger, unscoped: false });
    llmSpan('loose 1');
    llmSpan('loose 2');
    await flushObserve();
    expect((await other.queryRollouts()).items).toHaveLength(0);
    expect(observeStats()).toMatchObject({ unscoped: 2, recorded: 0 });
    expect(warnings.filter((w) => w.includes('outside any rollout'))).toHaveLength(1);
  });

  it('rollout.resources is the latest published version, refreshed after the TTL; each rollout records its version', async () => {
    const store = new MemoryStore();
    const first = await store.addResources({
      prompt: { resourceType: 'prompt_template', template: 'v1', engine: 'f-string' },
    });
    configureObserve({ store, logger, resourcesTtlMs: 200 });
    const a = await observe({}, async (rollout) => rollout);
    expect(a.resourcesId).toBe(first.resourcesId);
    expect(a.resources?.prompt).toMatchObject({ template: 'v1' });
    const second = await store.addResources({
      prompt: { resourceType: 'prompt_template', template: 'v2', engine: 'f-string' },
    });
    const served: string[] = [];
    const deadline = Date.now() + 5_000;
    while (served.at(-1) !== second.resourcesId && Date.now() < deadline) {
      served.push((await observe({}, async (rollout) => rollout.resourcesId))!);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(served.at(-1)).toBe(second.resourcesId);
    await flushObserve();
    expect((await store.getRolloutById(a.rolloutId))?.resourcesId).toBe(first.resourcesId);
  });

  it('observedRollout(req) gives an observeHandler handler its rollout, with the latest resources', async () => {
    const store = new MemoryStore();
    const published = await store.addResources({
      system_prompt: { resourceType: 'prompt_template', template: 'Be brief.', engine: 'f-string' },
    });
    configureObserve({ store, logger });
    const seen: unknown[] = [];
    const app = createServer(
      observeHandler((req, res) => {
        const rollout = observedRollout(req);
        seen.push(rollout?.resources?.system_prompt);
        res.end(JSON.stringify({ rolloutId: rollout?.rolloutId, resourcesId: rollout?.resourcesId }));
      }),
    );
    await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
    try {
      const response = await fetch(`http://127.0.0.1:${(app.address() as AddressInfo).port}/chat`);
      const body = (await response.json()) as { rolloutId: string; resourcesId: string };
      expect(body).toEqual({ rolloutId: response.headers.get('x-agl-rollout-id'), resourcesId: published.resourcesId });
      expect(seen).toEqual([expect.objectContaining({ template: 'Be brief.' })]);
      expect(observedRollout({})).toBeUndefined();
    } finally {
      await new Promise((resolve) => app.close(resolve));
    }
  });
});
