import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '../../memory/memory-store';
import { SqliteStore } from '../../sqlite/sqlite-store';
import { createStoreServer, type StoreServer } from '../index';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-span-routes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A memory store and a SQLite store behind servers, each with one running attempt of the same rollout shape. */
async function servers(): Promise<
  Array<{
    name: string;
    server: StoreServer;
    store: LightningStore;
    rolloutId: string;
    attemptId: string;
    counted: { fastBatches: number };
  }>
> {
  const out = [];
  for (const [name, store] of [
    ['memory', new MemoryStore()],
    ['sqlite', new SqliteStore({ path: join(dir, `${Math.random()}.sqlite`) })],
  ] as const) {
    const r = await store.startRollout({ input: 1 });
    const counted = { fastBatches: 0 };
    if (store instanceof SqliteStore) {
      const add = store.addSpansWithAttributesJson.bind(store);
      store.addSpansWithAttributesJson = (...args) => {
        counted.fastBatches += 1;
        return add(...args);
      };
    }
    out.push({
      name,
      server: await createStoreServer({ store, port: 0, closeStore: true }),
      store,
      rolloutId: r.rolloutId,
      attemptId: r.attempt.attemptId,
      counted,
    });
  }
  return out;
}

const wireSpan = (rolloutId: string, attemptId: string, spanId: string, attributes: unknown) => ({
  rollout_id: rolloutId,
  attempt_id: attemptId,
  sequence_id: 1,
  trace_id: 't',
  span_id: spanId,
  parent_id: null,
  name: 'n',
  attributes,
  start_time: 1_700_000_001,
  end_time: 1_700_000_002,
});

type Posted = { status: number; json: unknown };

async function post(server: StoreServer, body: string): Promise<Posted> {
  const response = await fetch(`${server.url}/v1/agl/spans/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
  });
  return { status: response.status, json: await response.json() };
}

/** Attribute values whose JSON text is easy to get wrong: escapes, non-ASCII, exponents, null, mixed and empty lists. */
const ODD_ATTRIBUTES = {
  'k"ey\\': 'é\n😀\u2028',
  n: -1.5e-3,
  big: 1e21,
  b: false,
  z: null,
  list: ['x', 2, true],
  empty: [],
};

describe('POST /spans/batch into a store that keeps attribute text', () => {
  it('stores and answers exactly what the memory store does: odd attribute text, duplicates, spaced JSON, echo', async () => {
    const all = await servers();
    type Answer = {
      compact: Posted;
      spaced: Posted;
      echoed: Posted;
      items: Array<{ spanId: string; attributes: unknown }>;
      wire: unknown[];
    };
    const answers: Answer[] = [];
    for (const { server, store, rolloutId, attemptId } of all) {
      const spans = [
        wireSpan(rolloutId, attemptId, 'a', ODD_ATTRIBUTES),
        wireSpan(rolloutId, attemptId, 'b', {}),
        wireSpan(rolloutId, attemptId, 'a', { dup: 1 }),
      ];
      const compact = await post(server, JSON.stringify({ spans, echo: false }));
      // The json.dumps spelling (spaces after separators) takes the usual path.
      const spaced = await post(
        server,
        JSON.stringify({ spans: [wireSpan(rolloutId, attemptId, 'c', ODD_ATTRIBUTES)], echo: false }, null, 1),
      );
      const echoed = await post(server, JSON.stringify({ spans: [wireSpan(rolloutId, attemptId, 'd', { e: 1 })] }));
      const stored = await store.querySpans({ rolloutId });
      const wire = await (await fetch(`${server.url}/v1/agl/spans?rollout_id=${rolloutId}`)).json();
      answers.push({
        compact,
        spaced,
        echoed,
        items: stored.items.map((s) => ({ spanId: s.spanId, attributes: s.attributes })),
        wire: (wire as { items: unknown[] }).items,
      });
      await server.close();
    }
    expect(answers[0]!.compact).toEqual({ status: 201, json: { inserted: [0, 1] } });
    expect(answers[0]!.items.map((s) => s.spanId)).toEqual(['a', 'b', 'c', 'd']);
    expect(answers[0]!.items[0]!.attributes).toEqual(ODD_ATTRIBUTES);
    const strip = (a: Answer) => ({
      ...a,
      wire: a.wire.map((s) => ({ ...(s as object), rollout_id: 'r', attempt_id: 'a' })),
      echoed: {
        ...a.echoed,
        json: (a.echoed.json as object[]).map((s) => ({ ...s, rollout_id: 'r', attempt_id: 'a' })),
      },
    });
    expect(strip(answers[1]!)).toEqual(strip(answers[0]!));
    // Only the compact echo-less batch took the attribute-text path.
    expect(all.map((s) => s.counted.fastBatches)).toEqual([0, 1]);
  });

  it('refuses a bad span with the same 4xx detail as the usual path, and stores nothing of the batch', async () => {
    const all = await servers();
    const answers: Array<{ badValue: Posted; badField: Posted; unknownAttempt: Posted; stored: number }> = [];
    for (const { server, store, rolloutId, attemptId } of all) {
      const bad = [
        wireSpan(rolloutId, attemptId, 'ok', { fine: 1 }),
        wireSpan(rolloutId, attemptId, 'bad', { nested: { no: 1 } }),
      ];
      const badValue = await post(server, JSON.stringify({ spans: bad, echo: false }));
      const badField = await post(
        server,
        JSON.stringify({
          spans: [{ ...wireSpan(rolloutId, attemptId, 'x', { a: 1 }), sequence_id: 'one' }],
          echo: false,
        }),
      );
      const unknownAttempt = await post(
        server,
        JSON.stringify({ spans: [wireSpan(rolloutId, 'at-missing', 'y', { a: 1 })], echo: false }),
      );
      const answer = { badValue, badField, unknownAttempt, stored: (await store.querySpans({ rolloutId })).total };
      answers.push(JSON.parse(JSON.stringify(answer).replaceAll(rolloutId, 'ro-x')) as typeof answer);
      await server.close();
    }
    expect(answers[0]!.badValue.status).toBe(422);
    expect(JSON.stringify(answers[0]!.badValue.json)).toContain('spans.1.attributes');
    expect(answers[0]!.badField.status).toBe(422);
    expect(JSON.stringify(answers[0]!.badField.json)).toContain('spans.0.sequence_id');
    expect(answers[0]!.unknownAttempt.status).toBe(404);
    expect(answers[0]!.stored).toBe(0);
    expect(answers[1]).toEqual(answers[0]);
  });
});
