import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { SpanInput } from '../schema/index';
import type { LightningStore } from '../store/index';

/**
 * The key under which a store that lives outside the process (the HTTP `StoreClient`) says how another thread can open
 * it again: `store[STORE_REOPEN]()` returns a {@link StoreReopenSpec}. Stores inside the process (memory, SQLite) have
 * none: their spans die with the process anyway.
 */
export const STORE_REOPEN: unique symbol = Symbol.for('agl.store.reopen') as never;

/**
 * How a worker thread opens a store again: `new (await import(module))[exportName](options)`. The worker runs with no
 * loader and no `--conditions`, so `module` must be JavaScript.
 */
export interface StoreReopenSpec {
  /** Module specifier or URL the worker imports. */
  module: string;
  /** The class exported by that module. */
  exportName: string;
  /** Constructor options (structured-cloneable: no functions). */
  options: unknown;
}

/** The reopen spec of a store, or `undefined` when it has none. */
export function storeReopenSpec(store: LightningStore): StoreReopenSpec | undefined {
  const reopen = (store as unknown as Record<symbol, unknown>)[STORE_REOPEN];
  if (typeof reopen !== 'function') return undefined;
  try {
    return (reopen as () => StoreReopenSpec | undefined).call(store);
  } catch {
    return undefined;
  }
}

/** Spans (sequence ids still to be taken) for one store. */
export interface ExitExportGroup {
  spec: StoreReopenSpec;
  spans: SpanInput[];
}

// Runs in the worker: numbers and adds each group's spans through a fresh store client, then wakes the main thread.
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
(async () => {
  const { groups, flag, port } = workerData;
  let error = null;
  for (const group of groups) {
    try {
      const mod = await import(group.spec.module);
      const store = new mod[group.spec.exportName](group.spec.options);
      const ids = await store.getNextSpanSequenceIds(group.spans.map((s) => [s.rolloutId, s.attemptId]));
      group.spans.forEach((s, i) => { if (typeof ids[i] === 'number') s.sequenceId = ids[i]; });
      await store.addSpans(group.spans);
    } catch (e) {
      error = (e && e.message) || String(e);
    }
  }
  port.postMessage({ error });
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
})();
`;

/**
 * Exports spans synchronously, for `process.on('exit')` where nothing asynchronous runs any more: a worker thread
 * opens each store again and adds the spans while this thread blocks on `Atomics.wait` (at most `timeoutMs`).
 * Returns the error message, or `null` when every group reached its store.
 */
export function exportSpansSync(groups: ExitExportGroup[], timeoutMs: number): string | null {
  if (groups.length === 0) return null;
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  try {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { groups, flag, port: port2 },
      transferList: [port2],
      // None of the app's flags: no preload instruments this thread again, no loader slows its start.
      execArgv: [],
      stdout: true,
      stderr: true,
    });
    worker.unref();
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (Atomics.wait(flag, 0, 0, timeoutMs) === 'timed-out') return `the store did not answer within ${timeoutMs} ms`;
  const answer = receiveMessageOnPort(port1)?.message as { error: string | null } | undefined;
  port1.close();
  return answer?.error ?? null;
}
