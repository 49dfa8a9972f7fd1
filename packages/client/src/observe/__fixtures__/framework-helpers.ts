import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ATTR_EXCEPTION_MESSAGE, SPAN_CHAT_COMPLETION, SPAN_EXCEPTION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { afterEach, beforeEach, vi } from 'vitest';
import { configureObserve, flushObserve, shutdownObserve } from '../../index';

/** What an AGL adapter writes for one LLM call: a span with `marker` as its prompt. Returns the answer. */
export async function fakeLlmCall(marker: string): Promise<string> {
  await new Promise((resolve) => setImmediate(resolve));
  return getAglTracer()
    .getTracer('framework-test')
    .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttribute('gen_ai.prompt.0.content', marker);
      span.setAttribute('gen_ai.completion.0.content', `answer to ${marker}`);
      span.end();
      return `answer to ${marker}`;
    });
}

/** Starts `server` on 127.0.0.1 with a free port; returns its base URL. */
export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Closes `server` (and its idle keep-alive sockets). */
export async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/**
 * A rollout as the tests check it, once it ended (polled, at most 10 s): status, input, the prompts of its LLM spans
 * and its exception messages.
 */
export async function storedRollout(
  store: MemoryStore,
  rolloutId: string,
): Promise<{ status: string | undefined; input: unknown; prompts: unknown[]; exceptions: unknown[] }> {
  const deadline = Date.now() + 10_000;
  let rollout = await store.getRolloutById(rolloutId);
  while ((!rollout || rollout.status === 'running') && Date.now() < deadline) {
    await flushObserve(500);
    await new Promise((resolve) => setTimeout(resolve, 10));
    rollout = await store.getRolloutById(rolloutId);
  }
  const spans = (await store.querySpans({ rolloutId })).items;
  return {
    status: rollout?.status,
    input: rollout?.input,
    prompts: spans.filter((s) => s.name === SPAN_CHAT_COMPLETION).map((s) => s.attributes['gen_ai.prompt.0.content']),
    exceptions: spans.filter((s) => s.name === SPAN_EXCEPTION).map((s) => s.attributes[ATTR_EXCEPTION_MESSAGE]),
  };
}

/**
 * Registers, for each test of the calling suite, a fresh `MemoryStore` that `observe` records into (`ctx.store`), and
 * closes the servers given to `ctx.track` after it.
 */
export function useObservedStore(): { store: MemoryStore; track: <S extends Server>(server: S) => S } {
  const servers: Server[] = [];
  const ctx = {
    store: new MemoryStore(),
    track: <S extends Server>(server: S): S => {
      servers.push(server);
      return server;
    },
  };
  beforeEach(() => {
    ctx.store = new MemoryStore();
    configureObserve({ store: ctx.store, logger: { warn: () => undefined } });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await shutdownObserve(1_000);
    for (const server of servers.splice(0)) await close(server);
  });
  return ctx;
}
