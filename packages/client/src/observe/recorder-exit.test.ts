import { spawn } from 'node:child_process';
import { createServer, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { LightningStore } from '@agl/core';
import { ATTR_EXCEPTION_MESSAGE, SPAN_CHAT_COMPLETION, SPAN_EXCEPTION } from '@agl/core/semconv';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { SOURCE_NODE_FLAGS } from '@agl/testing';
import { describe, expect, it } from 'vitest';

const CHILD = fileURLToPath(new URL('./__fixtures__/failing-exit-child.ts', import.meta.url));

interface ChildRun {
  rolloutId: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
  /** From the line with the rollout id (the request in flight) to the process's end, ms. */
  endingMs: number;
}

/** Runs the child in `mode` against `storeUrl`; with `signal`, sends it once the child printed its rollout id. */
function runChild(storeUrl: string, mode: string, exitMs: number, signal?: NodeJS.Signals): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SOURCE_NODE_FLAGS, CHILD, mode], {
      env: { ...process.env, AGL_STORE_URL: storeUrl, AGL_ROLLOUT_ID: '', AGL_ATTEMPT_ID: '', EXIT_MS: String(exitMs) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let printedAt = 0;
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (printedAt === 0 && stdout.includes('\n')) {
        printedAt = performance.now();
        if (signal) child.kill(signal);
      }
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, sig) =>
      resolve({ rolloutId: stdout.trim(), code, signal: sig, stderr, endingMs: performance.now() - printedAt }),
    );
  });
}

async function withStore<T>(use: (store: LightningStore, url: string) => Promise<T>): Promise<T> {
  const store = new MemoryStore();
  const server = await createStoreServer({ store, port: 0 });
  try {
    return await use(store, server.url);
  } finally {
    await server.close();
  }
}

// Issue 54: a service recorded in production mode (no runner) that ends badly still delivers its request: the rollout
// ends `failed`, the error is recorded, and every call made (the one cut off included) is stored.
describe('production recorder: a process that ends badly flushes its rollout, ended failed', () => {
  // `cause`: how the call cut off ends; `error`: the exception recorded on the rollout (the request's own error when
  // observe saw it fail, else how the process ended).
  const cases: Array<{ mode: string; code: number | null; signal?: NodeJS.Signals; cause: RegExp; error?: RegExp }> = [
    { mode: 'crash', code: 1, cause: /the process crashed: Error: boom in a timer/ },
    { mode: 'exit-in-catch', code: 1, cause: /exited with code 1/, error: /the model answered 400/ },
    {
      mode: 'tla',
      code: 1,
      cause: /the model answered 400|crashed|exited with code 1/,
      error: /the model answered 400/,
    },
    { mode: 'unhandled', code: 1, cause: /the process crashed: Error: the model answered 400/, error: /answered 400/ },
    { mode: 'sigterm', code: null, signal: 'SIGTERM', cause: /got SIGTERM/ },
  ];
  for (const { mode, code, signal, cause, error } of cases) {
    it(`${mode}: the rollout is failed, holds both calls and the error`, { timeout: 60_000 }, async () => {
      await withStore(async (store, url) => {
        const run = await runChild(url, mode, 5_000, signal);
        expect(run.rolloutId, run.stderr).toMatch(/^ro-/);
        expect(run.code).toBe(code);
        if (signal) expect(run.signal).toBe(signal);
        expect(await store.getRolloutById(run.rolloutId)).toMatchObject({ status: 'failed', input: mode });
        const spans = (await store.querySpans({ rolloutId: run.rolloutId })).items;
        const calls = spans.filter((s) => s.name === SPAN_CHAT_COMPLETION);
        expect(calls.map((s) => s.attributes['gen_ai.prompt.0.content']).sort()).toEqual(['cut off', 'first call']);
        const cutOff = calls.find((s) => s.status.statusCode === 'ERROR');
        expect(cutOff?.status.description).toMatch(cause);
        const errors = spans.filter((s) => s.name === SPAN_EXCEPTION).map((s) => s.attributes[ATTR_EXCEPTION_MESSAGE]);
        expect(
          errors.some((m) => (error ?? cause).test(String(m))),
          JSON.stringify(errors),
        ).toBe(true);
      });
    });
  }
});

/** A TCP server that accepts every connection and never answers (nor closes). */
async function silentServer(): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// Issue 55 (5): a store that accepts connections and never answers kept a recorded app alive for 42–60 s with
// exitFlushTimeoutMs: 2000. The bound below is generous (a busy machine) yet far under the store client's 30 s
// request timeout that used to decide it.
describe('production recorder: the exit flush never waits past its deadline', () => {
  const exitMs = 1_000;
  const bound = exitMs + 8_000;
  for (const { mode, signal } of [
    { mode: 'ends' },
    { mode: 'exit-in-catch' },
    { mode: 'crash' },
    { mode: 'sigterm', signal: 'SIGTERM' as const },
  ]) {
    it(
      `${mode}: a store that never answers; the process ends within exitFlushTimeoutMs`,
      { timeout: 60_000 },
      async () => {
        const silent = await silentServer();
        try {
          const run = await runChild(silent.url, mode, exitMs, signal);
          expect(run.rolloutId, run.stderr).toMatch(/^ro-/);
          expect(run.endingMs).toBeLessThan(bound);
        } finally {
          await silent.close();
        }
      },
    );
  }
});
