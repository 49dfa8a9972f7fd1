import { afterAll, beforeAll, describe } from 'vitest';
import type { AttemptedRollout, Span } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { MemoryStore } from '@agl/store';
import { type OpenAiTestServer, type OpenAiTestServerOptions, startOpenAiTestServer } from '@agl/testing';
import { type Gateway, type GatewayOptions, startGateway } from '../index';

/** The backend key the fixture's test server requires; the gateway is configured with it. */
export const BACKEND_KEY = 'sk-backend-secret-123';

/** A test backend, a memory store, a gateway in front, and one running training rollout. */
export interface GatewayFixture {
  llm: OpenAiTestServer;
  store: LightningStore;
  gateway: Gateway;
  rollout: AttemptedRollout;
  /** AGL 0.3 rollout-scoped base URL of {@link GatewayFixture.rollout}. */
  baseURL: string;
  close(): Promise<void>;
}

/** Starts a {@link GatewayFixture}. */
export async function startGatewayFixture(
  options: {
    gateway?: Partial<GatewayOptions>;
    backend?: OpenAiTestServerOptions;
    mode?: 'train' | 'val' | null;
    store?: LightningStore;
  } = {},
): Promise<GatewayFixture> {
  const llm = await startOpenAiTestServer({ apiKey: BACKEND_KEY, ...options.backend });
  const store = options.store ?? new MemoryStore();
  const gateway = await startGateway({
    store,
    backend: llm.baseURL,
    backendApiKey: BACKEND_KEY,
    port: 0,
    routeCacheTtlMs: 0,
    ...options.gateway,
  });
  const rollout = await store.startRollout({
    input: { question: 'q' },
    mode: options.mode === undefined ? 'train' : options.mode,
  });
  return {
    llm,
    store,
    gateway,
    rollout,
    baseURL: `${gateway.url}/rollout/${rollout.rolloutId}/attempt/${rollout.attempt.attemptId}/v1`,
    close: async () => {
      await gateway.close();
      await llm.close();
      await store.close();
    },
  };
}

/** The rollout's spans in sequence order. */
export async function spansOf(store: LightningStore, rolloutId: string): Promise<Span[]> {
  const page = await store.querySpans({ rolloutId, sortBy: 'sequence_id' });
  return page.items;
}

/** Body of the last request the backend received. */
export function lastBackendBody(llm: OpenAiTestServer): Record<string, unknown> {
  return llm.requests.at(-1)!.body as Record<string, unknown>;
}

/**
 * `describe.each` over both span-write modes (before the answer: SQLite, PostgreSQL, remote stores; right after it:
 * the memory store's default), each suite with its own {@link startGatewayFixture} started before its tests and
 * closed after them. `title` takes the mode at `%s`; `fixture()` returns the suite's fixture inside hooks and tests.
 */
export function describeSpanWriteModes(title: string, body: (fixture: () => GatewayFixture) => void): void {
  describe.each(['before-response', 'after-response'] as const)(title, (spanWrite) => {
    let fx: GatewayFixture | undefined;
    beforeAll(async () => {
      fx = await startGatewayFixture({ gateway: { spanWrite } });
    });
    afterAll(() => fx?.close());
    body(() => {
      if (!fx) throw new Error('describeSpanWriteModes: the fixture is read before the suite started it');
      return fx;
    });
  });
}
