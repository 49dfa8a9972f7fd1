import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryStore } from '../memory/memory-store';
import { SqliteStore } from '../sqlite/sqlite-store';
import { createStoreServer, type StoreServer } from './index';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agl-write-bounds-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function post(server: StoreServer, path: string, body: unknown): Promise<{ status: number; detail: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as { detail?: string };
  return { status: response.status, detail: json.detail ?? '' };
}

const span = (rolloutId: string, attemptId: string, spanId: string, reward: number) => ({
  rollout_id: rolloutId,
  attempt_id: attemptId,
  sequence_id: 1,
  trace_id: 't',
  span_id: spanId,
  parent_id: null,
  name: 'agentlightning.annotation',
  attributes: { 'agentlightning.reward.0.name': 'primary', 'agentlightning.reward.0.value': reward },
  start_time: 1_700_000_000,
  end_time: 1_700_000_001,
});

describe('rewards outside ±1e15 are a 422 naming the field', () => {
  for (const kind of ['memory', 'sqlite'] as const) {
    it(`${kind}: feedback, events and the span routes refuse them and store nothing`, async () => {
      const store = kind === 'memory' ? new MemoryStore() : new SqliteStore({ path: join(dir, 'b.sqlite') });
      const server = await createStoreServer({ store, port: 0, closeStore: true });
      try {
        const r = await store.startRollout({ input: 1 });
        const a = r.attempt.attemptId;
        const before = (await store.querySpans({ rolloutId: r.rolloutId })).items.length;

        const feedback = await post(server, `/v1/agl/rollouts/${r.rolloutId}/feedback`, { reward: 1e308 });
        expect(feedback.status).toBe(422);
        expect(feedback.detail).toMatch(/reward.*±1e15/u);
        const dimension = await post(server, `/v1/agl/rollouts/${r.rolloutId}/feedback`, {
          reward: 1,
          dimensions: { tone: -2e15 },
        });
        expect(dimension.status).toBe(422);
        expect(dimension.detail).toMatch(/dimensions\.tone/u);

        const event = await post(server, `/api/rollouts/${r.rolloutId}/attempt/${a}/events`, {
          event_type: 'reward',
          data: { value: -1e16 },
        });
        expect(event.status).toBe(422);
        expect(event.detail).toMatch(/data\.value/u);

        const single = await post(server, '/v1/agl/spans', span(r.rolloutId, a, 's1', 1e300));
        expect(single.status).toBe(422);
        expect(single.detail).toMatch(/span\.attributes\["agentlightning\.reward\.0\.value"\]/u);
        const batch = await post(server, '/v1/agl/spans/batch', {
          spans: [span(r.rolloutId, a, 's2', 0.5), span(r.rolloutId, a, 's3', -1e300)],
        });
        expect(batch.status).toBe(422);
        expect(batch.detail).toMatch(/agentlightning\.reward\.0\.value.*±1e15/u);
        expect((await store.querySpans({ rolloutId: r.rolloutId })).items.length).toBe(before);

        // In range: stored.
        expect((await post(server, `/v1/agl/rollouts/${r.rolloutId}/feedback`, { reward: 1e15 })).status).toBe(201);
        const ok = await post(server, '/v1/agl/spans/batch', { spans: [span(r.rolloutId, a, 's4', -3)] });
        expect(ok.status).toBeLessThan(300);
      } finally {
        await server.close();
      }
    });
  }
});
