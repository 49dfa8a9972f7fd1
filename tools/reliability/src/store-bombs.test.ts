import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FuzzRequest } from './harness/fuzz-http';
import { waitForLine } from './harness/child-process';
import { startStoreProcess, type StoreProcess } from './harness/store-process';

const PROBER = fileURLToPath(new URL('./__fixtures__/health-prober.mjs', import.meta.url));

/**
 * Budgets of the store README ("Limits"): while any one hostile request is answered, the health route answers within a
 * second and the server process stays under its memory budget.
 */
const HEALTH_BUDGET_MS = 1_000;
const RSS_BUDGET_MIB = 512;
const MIB = 1024 * 1024;

/** `{"...":[{},{},...]}` (or `"..."` items) of about `bytes` bytes, wrapped by `prefix` and `suffix`. */
function explosion(prefix: string, item: string, bytes: number, suffix: string): string {
  const count = Math.floor((bytes - prefix.length - suffix.length) / (item.length + 1));
  return `${prefix}${`${item},`.repeat(count - 1)}${item}${suffix}`;
}

/** A protobuf length-delimited field. */
function delimited(field: number, payload: Buffer): Buffer {
  const header: number[] = [(field << 3) | 2];
  for (let v = payload.length; ; v = Math.floor(v / 128)) {
    if (v < 0x80) {
      header.push(v);
      break;
    }
    header.push((v & 0x7f) | 0x80);
  }
  return Buffer.concat([Buffer.from(header), payload]);
}

/** An `ExportTraceServiceRequest` of `count` empty spans (2 bytes each): the protobuf object explosion. */
function emptySpans(count: number): Buffer {
  return delimited(1, delimited(2, Buffer.alloc(count * 2, Buffer.from([0x12, 0x00]))));
}

/** A JSON object of `count` distinct keys: the slowest shape for `JSON.parse` per byte. */
function distinctKeys(count: number): string {
  return `{${Array.from({ length: count }, (_, i) => `"k${i}":${i}`).join(',')}}`;
}

const otlp = (body: Buffer, type: string, gzip: boolean): Pick<FuzzRequest, 'headers' | 'body'> => ({
  headers: { 'content-type': type, ...(gzip ? { 'content-encoding': 'gzip' } : {}) },
  body: gzip ? gzipSync(body, { level: 9 }) : body,
});

/**
 * The "status" of a request whose connection the server closed while the client was still writing its body: it refused
 * an oversize body by its Content-Length, before reading it (the 413 it sent may be lost to the reset).
 */
const CLOSED_EARLY = 0;

interface Case {
  name: string;
  request: FuzzRequest;
  /** Statuses the store may answer. */
  status: number[];
}

const P = '/v1/agl';
const post = (
  path: string,
  body: string | Buffer,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Omit<FuzzRequest, 'kind'> => ({
  method: 'POST',
  path,
  headers,
  body: typeof body === 'string' ? body : new Uint8Array(body),
  expect: 'reject',
});

/** Compressed bombs: small on the wire, large once inflated. */
function compressedBombs(): Case[] {
  const spansJson = (bytes: number) =>
    Buffer.from(explosion('{"resourceSpans":[{"scopeSpans":[{"spans":[', '{}', bytes, ']}]}]}'));
  return [
    {
      name: 'OTLP JSON, 32 MiB of empty spans in 32 KiB of gzip (finding 3)',
      request: { ...post('/v1/traces', ''), ...otlp(spansJson(32 * MIB - 64), 'application/json', true), kind: 'bomb' },
      status: [413],
    },
    {
      name: 'OTLP JSON, 16 MiB of empty spans in gzip (just under the inflation limit)',
      request: { ...post('/v1/traces', ''), ...otlp(spansJson(16 * MIB - 64), 'application/json', true), kind: 'bomb' },
      status: [413],
    },
    {
      name: 'OTLP protobuf, 8 M empty spans in gzip (just under the inflation limit)',
      request: {
        ...post('/v1/traces', ''),
        ...otlp(emptySpans(8 * MIB - 16), 'application/x-protobuf', true),
        kind: 'bomb',
      },
      status: [413],
    },
    {
      name: 'OTLP gzip inflating past the limit (64 MiB of zeros)',
      request: {
        ...post('/v1/traces', ''),
        ...otlp(Buffer.alloc(64 * MIB), 'application/x-protobuf', true),
        kind: 'bomb',
      },
      status: [413],
    },
  ];
}

/** A valid span batch of about `bytes` bytes: 1,000 spans, each with one large attribute (echo: false, as StoreClient). */
function largeSpanBatch(owner: Owner, bytes: number): string {
  const text = 'x'.repeat(Math.floor(bytes / 1000) - 300);
  const spans = Array.from({ length: 1000 }, (_, i) => ({
    rollout_id: owner.rolloutId,
    attempt_id: owner.attemptId,
    sequence_id: i + 1,
    trace_id: 't-big',
    span_id: `s-${i}`,
    parent_id: null,
    name: 'big',
    attributes: { 'gen_ai.prompt.0.content': text },
    start_time: 1_700_000_001,
    end_time: 1_700_000_002,
  }));
  return JSON.stringify({ spans, echo: false });
}

interface Owner {
  rolloutId: string;
  attemptId: string;
}

/** Object explosions: many tiny values, each costing `JSON.parse` (or a protobuf decoder) far more than its bytes. */
function objectExplosions(owner: Owner): Case[] {
  return [
    {
      name: 'span batch, 1,000 valid spans in 16 MiB (the largest accepted body)',
      request: { ...post(`${P}/spans/batch`, largeSpanBatch(owner, 16 * MIB - 64 * 1024)), kind: 'worst-accepted' },
      status: [201],
    },
    {
      name: 'search, 32 MiB of {} (finding 4)',
      request: { ...post(`${P}/rollouts/search`, explosion('{"junk":[', '{}', 32 * MIB, ']}')), kind: 'explosion' },
      status: [413, CLOSED_EARLY],
    },
    {
      name: 'search, 1 MiB of {} (under the control byte limit)',
      request: { ...post(`${P}/rollouts/search`, explosion('{"junk":[', '{}', MIB - 64, ']}')), kind: 'explosion' },
      status: [413],
    },
    {
      name: 'span batch, 16 MiB of {}',
      request: { ...post(`${P}/spans/batch`, explosion('{"spans":[', '{}', 16 * MIB - 64, ']}')), kind: 'explosion' },
      status: [413],
    },
    {
      name: 'OTLP protobuf, 4 M empty spans, uncompressed',
      request: {
        ...post('/v1/traces', emptySpans(4 * MIB), { 'content-type': 'application/x-protobuf' }),
        kind: 'explosion',
      },
      status: [413],
    },
    // The worst bodies the limits let through: just under the value limit, in the slowest shape to parse.
    {
      name: 'span batch, 149,990 distinct keys (accepted by the limits, refused by the schema)',
      request: { ...post(`${P}/spans/batch`, `{"spans":[],"junk":${distinctKeys(149_990)}}`), kind: 'worst-accepted' },
      status: [422],
    },
    // 74,990 items of `{}` are 149,981 values (a bracket and a comma each).
    {
      name: 'enqueue, 74,990 {} (accepted by the limits, refused by the schema)',
      request: {
        ...post(`${P}/queues/rollouts/enqueue`, explosion('{"rollouts":[', '{}', 74_990 * 3 + 15, ']}')),
        kind: 'worst-accepted',
      },
      status: [422],
    },
  ];
}

/** Peak resident memory of `pid` since the last {@link resetPeak}, in MiB (Linux `/proc`). */
function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

/** Resets the peak that {@link peakRssMiB} reads (writing 5 to `clear_refs`). */
function resetPeak(pid: number): void {
  writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

interface Measured {
  status: number;
  answerMs: number;
  healthMaxMs: number;
  peakRssMiB: number;
}

describe.skipIf(process.platform !== 'linux')(
  'compressed bombs and object explosions against a store server process',
  () => {
    let dir: string;
    let server: StoreProcess;
    let owner: Owner;
    const figures: string[] = [];

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'agl-bombs-'));
      server = await startStoreProcess({ dbPath: join(dir, 'agl.sqlite') });
      // Warm both sides up (first fetch, the server's first JSON and OTLP requests) so the figures are the bodies' own.
      for (const [path, type, body] of [
        [`${P}/rollouts/search`, 'application/json', '{}'],
        ['/v1/traces', 'application/json', '{"resourceSpans":[]}'],
        ['/v1/traces', 'application/x-protobuf', ''],
      ]) {
        await (
          await fetch(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': type! }, body })
        ).arrayBuffer();
      }
      const started = await fetch(`${server.url}${P}/rollouts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"input":1}',
      });
      const rollout = (await started.json()) as { rollout_id: string; attempt: { attempt_id: string } };
      owner = { rolloutId: rollout.rollout_id, attemptId: rollout.attempt.attempt_id };
    });
    afterAll(async () => {
      console.log(figures.join('\n'));
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    /**
     * Sends one request while a prober process asks the health route every 20 ms (its own process, so the test's work of
     * sending a large body does not delay the probes); the slowest probe is the event-loop stall the request caused.
     */
    async function measure(request: FuzzRequest): Promise<Measured> {
      const pid = server.child.pid!;
      resetPeak(pid);
      const prober = spawn(process.execPath, [PROBER, server.url], { stdio: ['pipe', 'pipe', 'inherit'] });
      const probed = waitForLine(prober, /^HEALTH_MAX_MS=(\d+)$/, 120_000);
      await waitForLine(prober, /^PROBING$/);
      const started = performance.now();
      // fetch (undici) reads an answer sent before the body is fully written: a route refuses an oversize body at once.
      const res = await fetch(`${server.url}${request.path}`, {
        method: request.method,
        headers: request.headers,
        body: request.body,
      })
        .then(async (answer) => ({ status: answer.status, text: await answer.text() }))
        .catch((error: unknown) => {
          const code = (error as { cause?: { code?: string } }).cause?.code;
          if (code === 'EPIPE' || code === 'ECONNRESET') return { status: CLOSED_EARLY, text: '' };
          throw error;
        })
        .finally(() => prober.stdin!.end('stop\n'));
      const answerMs = performance.now() - started;
      return { status: res.status, answerMs, healthMaxMs: Number(await probed), peakRssMiB: peakRssMiB(pid) };
    }

    for (const [family, cases] of [
      ['compressed-bomb', compressedBombs],
      ['object-explosion', () => objectExplosions(owner)],
    ] as const) {
      it(`${family}: each answer is a 4xx, health answers within ${HEALTH_BUDGET_MS} ms, RSS stays under ${RSS_BUDGET_MIB} MiB`, async () => {
        for (const c of cases()) {
          const m = await measure(c.request);
          figures.push(
            `${family} | ${c.name} | ${m.status} in ${Math.round(m.answerMs)} ms | health max ${Math.round(m.healthMaxMs)} ms | peak RSS ${Math.round(m.peakRssMiB)} MiB`,
          );
          expect(c.status, c.name).toContain(m.status);
          expect(m.healthMaxMs, c.name).toBeLessThan(HEALTH_BUDGET_MS);
          expect(m.peakRssMiB, c.name).toBeLessThan(RSS_BUDGET_MIB);
        }
        expect((await fetch(`${server.url}${P}/health`)).status).toBe(200);
      });
    }
  },
);
