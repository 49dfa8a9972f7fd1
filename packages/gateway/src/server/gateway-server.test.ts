import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Span, SpanInput } from '@agl/core/schema';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';
import { describe, expect, it } from 'vitest';
import { startGatewayFixture } from '../__fixtures__/gateway-fixture';
import { spanWriteFor } from './gateway-server';

/** A memory store that notes, for each span it is given, how far the answer of its call had got then. */
class WatchingStore extends MemoryStore {
  /**
   * The gateway's answers so far, by the span id of the client's `traceparent` (the span's parent), with whether their
   * `finish` event (an event-loop turn or more after the write) has fired.
   */
  readonly answers = new Map<string, { res: ServerResponse; finished: boolean }>();
  seen: string[] = [];

  #note(span: SpanInput): void {
    const answer = this.answers.get(span.parentId ?? '');
    this.seen.push(
      answer === undefined
        ? 'no answer'
        : answer.finished
          ? 'answer finished'
          : answer.res.writableEnded
            ? 'answer written'
            : 'answer not written',
    );
  }

  override async addSpan(span: SpanInput): Promise<Span | null> {
    this.#note(span);
    return super.addSpan(span);
  }

  override async addSpans(spans: SpanInput[]): Promise<Span[]> {
    for (const span of spans) this.#note(span);
    return super.addSpans(spans);
  }
}

describe('span write modes', () => {
  it('auto answers first only with a store no other thread or process can reach', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agl-gw-span-write-'));
    const memory = new MemoryStore();
    const sqlite = new SqliteStore({ path: join(dir, 'store.sqlite') });
    try {
      expect(spanWriteFor('auto', memory)).toBe('after-response');
      expect(spanWriteFor('auto', sqlite)).toBe('before-response');
      expect(spanWriteFor('before-response', memory)).toBe('before-response');
      expect(spanWriteFor('after-response', sqlite)).toBe('after-response');
    } finally {
      await memory.close();
      await sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ['before-response', 'answer not written'],
    ['after-response', 'answer written'],
  ] as const)(
    '%s: each span reaches the store when the answer is %s, and before its write completes',
    async (spanWrite, state) => {
      const store = new WatchingStore();
      const fx = await startGatewayFixture({ store, gateway: { spanWrite } });
      // The gateway's own requests (the test backend runs in this process too).
      const onRequest = (message: unknown): void => {
        const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
        if (!request.url?.startsWith('/rollout/')) return;
        const answer = { res: response, finished: false };
        store.answers.set(String(request.headers.traceparent).split('-')[2]!, answer);
        response.once('finish', () => {
          answer.finished = true;
        });
      };
      subscribe('http.server.request.start', onRequest);
      let calls = 0;
      const call = async (stream: boolean): Promise<void> => {
        calls += 1;
        const traceparent = `00-${'a'.repeat(32)}-${String(calls).padStart(16, '0')}-01`;
        const res = await fetch(`${fx.baseURL}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', traceparent },
          body: JSON.stringify({ model: 'm', stream, messages: [{ role: 'user', content: '2 + 2' }] }),
        });
        expect(res.status).toBe(200);
        await res.text();
      };
      try {
        for (const stream of [false, true]) await call(stream);
        // Overlapping calls: their answers may go out together at the end of a turn, each still before its span.
        await Promise.all([false, false, false, true, true].map(call));
        await fx.gateway.drained();
        expect(store.seen).toEqual(Array(7).fill(state));
      } finally {
        unsubscribe('http.server.request.start', onRequest);
        await fx.close();
      }
    },
  );
});
