import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { createStoreServer, type StoreServer } from '@agl/store/server';
import { SqliteStore } from '@agl/store/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  closeFuzzAgent,
  FUZZ_BATCH,
  FUZZ_SEED,
  fuzzBatches,
  problemsOf,
  type FuzzRequest,
  type FuzzResponse,
} from './harness/fuzz-http';
import { routeTable } from './harness/route-table';
import { storeArbitraries } from './harness/store-arbitraries';

const TOKEN = 'fuzz-token';
/** 5,600 + 1,000 requests against the store server (with the gateway fuzz: over 10,000 in total). */
const MIXED_RUNS = Number(process.env.AGL_FUZZ_RUNS ?? 700);
/** The mixed run is split over fresh servers: a store that keeps growing makes every later list query slower. */
const CHUNKS = 4;
const REJECT_RUNS = 125;

interface Tally {
  rollouts: number;
  attempts: number;
  spans: number;
  resourceIds: Set<string>;
  workerIds: Set<string>;
}

/** What a 2xx answer says the store now holds more of. */
function tally(t: Tally, req: FuzzRequest, res: FuzzResponse): void {
  if (res.status < 200 || res.status >= 300 || req.method !== 'POST') return;
  const path = req.path.split('?')[0]!;
  const json = res.json as unknown;
  // A list answer counts its items; an `echo: false` span batch answers `{ inserted: [indexes] }`.
  const inserted = (json as { inserted?: unknown } | null)?.inserted;
  const items = Array.isArray(json) ? json.length : Array.isArray(inserted) ? inserted.length : 0;
  let body: Record<string, unknown> = {};
  try {
    body = typeof req.body === 'string' ? (JSON.parse(req.body) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  if (typeof body?.worker_id === 'string') t.workerIds.add(body.worker_id);
  if (path === '/v1/agl/queues/rollouts/enqueue') t.rollouts += items;
  else if (path === '/v1/agl/rollouts') {
    t.rollouts += 1;
    t.attempts += 1;
  } else if (path === '/v1/agl/queues/rollouts/dequeue') t.attempts += items;
  else if (/^\/v1\/agl\/rollouts\/[^/]+\/attempts$/.test(path)) t.attempts += 1;
  else if (path === '/v1/agl/spans') t.spans += json === null ? 0 : 1;
  else if (path === '/v1/agl/spans/batch') t.spans += items;
  else if (/^\/api\/rollouts\/[^/]+\/attempt\/[^/]+\/events$/.test(path)) t.spans += 1;
  else if (path === '/v1/traces' && req.kind === 'valid-otlp') t.spans += countOtlpSpans(req);
  else if (/^\/v1\/agl\/resources(\/[^/]+)?$/.test(path))
    t.resourceIds.add(String((json as { resources_id?: unknown }).resources_id));
  else if (/^\/v1\/agl\/workers\/[^/]+$/.test(path))
    t.workerIds.add(String((json as { worker_id?: unknown }).worker_id));
}

/** Spans in a valid OTLP request built by the generators (one per `otlp-fuzz` name). */
function countOtlpSpans(req: FuzzRequest): number {
  return (
    Buffer.from(req.body as Uint8Array)
      .toString('latin1')
      .split('otlp-fuzz').length - 1
  );
}

describe('fuzzing the store server (fast-check, real HTTP on 127.0.0.1, SQLite file)', () => {
  let dir: string;
  let store: SqliteStore;
  let server: StoreServer;
  let arbs: ReturnType<typeof storeArbitraries>;
  let opened = 0;
  const sent = { count: 0 };
  const timing = new Map<string, number>();

  /** A fresh SQLite store and server, so the data written by earlier chunks does not slow later ones. */
  async function open(): Promise<void> {
    await server?.close();
    await store?.close();
    store = new SqliteStore({ path: join(dir, `agl-${++opened}.sqlite`) });
    server = await createStoreServer({ store, port: 0, token: TOKEN, bodyLimit: 1024 * 1024, maxWaitSeconds: 0.05 });
    const owners = [];
    for (let i = 0; i < 3; i++) {
      const r = await store.startRollout({ input: i });
      owners.push({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId });
    }
    await store.addResources({ prompt: { resourceType: 'prompt_template', template: 'hi', engine: 'f-string' } });
    arbs = storeArbitraries({
      token: TOKEN,
      owners,
      routes: routeTable(server.app).filter((r) => r.method !== 'OPTIONS'),
    });
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agl-fuzz-'));
  });
  afterAll(async () => {
    if (process.env.AGL_FUZZ_PROFILE)
      console.log(
        [...timing]
          .sort((a, b) => b[1] - a[1])
          .map(([k, ms]) => `${k} ${Math.round(ms)}ms`)
          .join('\n'),
      );
    closeFuzzAgent();
    await server?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Sends `numRuns` batches from `request` to the current server, counting what `t` tallies when given. */
  async function fuzz(request: fc.Arbitrary<FuzzRequest>, numRuns: number, seed: number, t: Tally | null) {
    const check = (req: FuzzRequest, res: FuzzResponse): string[] => {
      if (t) tally(t, req, res);
      const own = problemsOf(req, res, (r) => r.status === 501 && /^\/v1\/(metrics|logs|development)/.test(req.path));
      if (req.kind === 'bad-token' && res.status !== 401)
        own.push(`bad token answered ${res.status}: ${req.method} ${req.path}`);
      // A full success is an empty ExportTraceServiceResponse; a partial success would name rejected spans.
      if (req.kind === 'valid-otlp' && res.text.length > 0)
        own.push(`valid OTLP spans partly rejected: ${res.text.slice(0, 200)}`);
      return own;
    };
    sent.count += await fuzzBatches({ baseUrl: server.url, request, numRuns, seed, check, timing });
  }

  it('never answers 5xx, refuses invalid input with a 4xx JSON detail, accepts valid input, and changes only by accepted writes', async () => {
    for (let chunk = 0; chunk < CHUNKS; chunk++) {
      await open();
      const initial = await store.statistics();
      const t: Tally = {
        rollouts: 0,
        attempts: 0,
        spans: 0,
        resourceIds: new Set((await store.queryResources()).items.map((r) => r.resourcesId)),
        workerIds: new Set(),
      };
      const request = fc.oneof(...arbs.valid, ...arbs.invalid, ...arbs.unknown);
      await fuzz(request, MIXED_RUNS / CHUNKS, FUZZ_SEED + chunk, t);
      const final = await store.statistics();
      expect(final.totalRollouts, `chunk ${chunk}`).toBe(initial.totalRollouts + t.rollouts);
      expect(final.totalAttempts, `chunk ${chunk}`).toBe(initial.totalAttempts + t.attempts);
      expect(final.totalSpans, `chunk ${chunk}`).toBe(initial.totalSpans + t.spans);
      expect(final.totalResources, `chunk ${chunk}`).toBe(t.resourceIds.size);
      const workers = (await store.queryWorkers()).items.map((w) => w.workerId);
      expect(workers.filter((w) => !t.workerIds.has(w))).toEqual([]);
      expect((await fetch(`${server.url}/v1/agl/health`)).status).toBe(200);
    }
  });

  it('leaves the store exactly as it was after a stream of only invalid requests', async () => {
    if (!store) await open();
    const snapshot = async () => {
      const { uptime: _uptime, ...stats } = await store.statistics();
      const rollouts = (await store.queryRollouts({ limit: -1 })).items;
      const attempts = await Promise.all(
        rollouts.slice(0, 50).map((r) => store.queryAttempts({ rolloutId: r.rolloutId })),
      );
      const spans = await Promise.all(
        rollouts.slice(0, 50).map((r) => store.querySpans({ rolloutId: r.rolloutId, limit: -1 })),
      );
      return {
        stats,
        rollouts,
        attempts,
        spans,
        resources: (await store.queryResources()).items,
        workers: (await store.queryWorkers()).items,
      };
    };
    const before = await snapshot();
    const request = fc.oneof(...arbs.invalid);
    await fuzz(request, REJECT_RUNS, FUZZ_SEED + 1, null);
    expect(await snapshot()).toEqual(before);
  });

  it('sent the planned number of requests', () => {
    expect(sent.count).toBeGreaterThanOrEqual((MIXED_RUNS + REJECT_RUNS) * FUZZ_BATCH);
  });
});
