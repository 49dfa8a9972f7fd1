import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { SpanInput } from '../schema/index';
import type { LightningStore } from '../store/index';

/**
 * The key under which a store that lives outside the process (the HTTP `StoreClient`) says how another thread can open
 * it again: `store[STORE_REOPEN]()` returns a {@link StoreReopenSpec}. Stores inside the process (memory, SQLite) have
 * none: their spans die with the process anyway.
 */
export const STORE_REOPEN: unique symbol = Symbol.for('agl.store.reopen');

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

/**
 * A production recorder's records (each already wire JSON) for one store, applied with its
 * `applyEncodedRecords(records, { retry: false })` (the HTTP `StoreClient`).
 */
export interface ExitRecordsGroup {
  spec: StoreReopenSpec;
  records: string[];
}

// Runs in the exporter thread: imports store modules when asked to warm up, and on a job numbers and adds each group's
// spans through a fresh store, answers on the port, then wakes the main thread (blocked in Atomics.wait).
const WORKER_SOURCE = `
const { workerData } = require('node:worker_threads');
const { port } = workerData;
const modules = new Map();
const load = (module) => {
  let loading = modules.get(module);
  if (!loading) {
    loading = import(module);
    loading.catch(() => undefined);
    modules.set(module, loading);
  }
  return loading;
};
port.on('message', async (message) => {
  if (message.type === 'warm') return void load(message.module);
  let error = null;
  for (const group of message.groups) {
    try {
      const store = new (await load(group.spec.module))[group.spec.exportName](group.spec.options);
      if (group.records) {
        await store.applyEncodedRecords(group.records, { retry: false });
        continue;
      }
      const ids = await store.getNextSpanSequenceIds(group.spans.map((s) => [s.rolloutId, s.attemptId]));
      group.spans.forEach((s, i) => { if (typeof ids[i] === 'number') s.sequenceId = ids[i]; });
      await store.addSpans(group.spans);
    } catch (e) {
      error = (e && e.message) || String(e);
    }
  }
  port.postMessage({ id: message.id, error });
  Atomics.store(message.flag, 0, 1);
  Atomics.notify(message.flag, 0);
});
`;

let exporter: { worker: Worker; port: MessagePort; warmed: Set<string> } | null = null;
let jobs = 0;

/** The exporter thread, started on first use; unref'ed, so it never keeps the process alive. */
function exporterThread(): NonNullable<typeof exporter> {
  if (exporter) return exporter;
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: { port: port2 },
    transferList: [port2],
    // None of the app's flags: no preload instruments this thread again, no loader slows its start.
    execArgv: [],
    // What the thread prints (a store warning) never reaches the app's stdout / stderr.
    stdout: true,
    stderr: true,
  });
  worker.unref();
  port1.unref();
  exporter = { worker, port: port1, warmed: new Set() };
  return exporter;
}

/**
 * Starts the exporter thread and has it import the store module now, so an exit later only pays the store round
 * trips. The tracer calls it when it first queues a span for a store that has a {@link StoreReopenSpec}.
 */
export function warmExitExporter(spec: StoreReopenSpec): void {
  try {
    const thread = exporterThread();
    if (thread.warmed.has(spec.module)) return;
    thread.warmed.add(spec.module);
    thread.port.postMessage({ type: 'warm', module: spec.module });
  } catch {
    // no worker threads here: the exit export will report it
  }
}

/**
 * Exports spans synchronously, for `process.on('exit')` where nothing asynchronous runs any more: the exporter thread
 * opens each store again and adds the spans while this thread blocks on `Atomics.wait` (at most `timeoutMs`).
 * Returns the error message, or `null` when every group reached its store.
 */
export function exportSpansSync(groups: ExitExportGroup[], timeoutMs: number): string | null {
  return runExitJob(groups, timeoutMs);
}

/**
 * Sends a production recorder's records synchronously, for `process.on('exit')`: the same exporter thread as
 * {@link exportSpansSync} opens the store again and applies them while this thread blocks, at most `timeoutMs` (the
 * thread is abandoned then, whatever its socket does: the process exits). Returns the error message, or `null`.
 */
export function exportRecordsSync(groups: ExitRecordsGroup[], timeoutMs: number): string | null {
  return runExitJob(groups, timeoutMs);
}

function runExitJob(groups: Array<ExitExportGroup | ExitRecordsGroup>, timeoutMs: number): string | null {
  if (groups.length === 0) return null;
  if (timeoutMs <= 0) return 'no time was left before the exit deadline';
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const id = (jobs += 1);
  let thread: NonNullable<typeof exporter>;
  try {
    thread = exporterThread();
    thread.port.postMessage({ type: 'export', id, groups, flag });
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (Atomics.wait(flag, 0, 0, timeoutMs) === 'timed-out') return `the store did not answer within ${timeoutMs} ms`;
  // Skip the late answer of an earlier job that timed out.
  for (let received = receiveMessageOnPort(thread.port); received; received = receiveMessageOnPort(thread.port)) {
    const answer = received.message as { id: number; error: string | null };
    if (answer.id === id) return answer.error;
  }
  return null;
}
