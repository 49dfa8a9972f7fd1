import {
  emitException,
  exportRecordsSync,
  getAglTracer,
  installExitFlush,
  preciseNowMs,
  withRolloutContext,
  type StoreReopenSpec,
} from '@agl/core/tracer';
import type { Recorder } from './recorder';

/** Options of {@link installRecorderExit}. */
export interface RecorderExitOptions {
  /** The whole exit flush, however the process ends, takes at most this long, ms (`exitFlushTimeoutMs`). */
  timeoutMs: number;
  /**
   * How the exit path's exporter thread opens the store again (the HTTP `StoreClient`'s reopen spec); `undefined` for
   * an in-process store, whose records die with the process anyway.
   */
  reopen: StoreReopenSpec | undefined;
  /** The asynchronous flush (tracer, then the recorder's buffer), at most `timeoutMs`; true when the buffer emptied. */
  flush: (timeoutMs: number) => Promise<boolean>;
  /** Clock (ms), injectable for tests. */
  now?: () => number;
}

/**
 * The production recorder's exit path, on the same hooks as the runner mode's (`installExitFlush` of
 * `@agl/core/tracer`: `beforeExit`, `exit` after `process.exit` / an uncaught exception / an unhandled rejection / a
 * rejected top-level await, SIGTERM / SIGINT):
 * - the spans still open are closed with the error (the tracer's `closeOpenSpans`), every rollout started and not ended
 *   gets an `agentlightning.exception` span naming how the process ended and ends `failed`;
 * - `beforeExit` and signals flush asynchronously; on `exit` (where nothing asynchronous runs) what is still buffered
 *   goes out synchronously through the tracer's exporter thread;
 * - one deadline for all of it, set by the first of these events: when it passes the request in flight is aborted and
 *   the export loop stops ({@link Recorder.halt}), so a store that accepts connections and never answers keeps the
 *   process no longer than `timeoutMs`.
 *
 * Returns an uninstall function.
 */
export function installRecorderExit(recorder: Recorder, options: RecorderExitOptions): () => void {
  const now = options.now ?? Date.now;
  let deadline: number | null = null;
  const left = (): number => {
    deadline ??= now() + options.timeoutMs;
    return Math.max(0, deadline - now());
  };
  // One asynchronous try per process end: `beforeExit` fires again after each flush, and a store that stays down must
  // not keep the process alive for ever.
  let flushing: Promise<void> | null = null;
  const flush = (): Promise<void> =>
    (flushing ??= options.flush(left()).then(
      (emptied) => {
        if (!emptied) recorder.halt();
      },
      () => recorder.halt(),
    ));
  const endLive = (message: string): void => {
    left();
    const tracer = getAglTracer();
    tracer.closeOpenSpans(message);
    // The spans just closed reach the recorder before the ends (the tracer hands them over synchronously here).
    void tracer.forceFlush().catch(() => undefined);
    const live = recorder.liveRollouts();
    if (live.length === 0) return;
    // Recorded (as the exception span's `exception.type` / `exception.message`), never thrown.
    const error = Object.assign(new Error(message), { name: 'ProcessEnded' });
    for (const rollout of live) {
      try {
        withRolloutContext(
          { ...rollout, store: recorder.store, wireSpanSink: recorder.wireSpanSink, tracer, mode: null },
          () => emitException(error),
        );
      } catch {
        // recording the error must never change how the process ends
      }
    }
    void tracer.forceFlush().catch(() => undefined);
    const endTime = preciseNowMs() / 1000;
    for (const rollout of live) recorder.end(rollout.rolloutId, rollout.attemptId, 'failed', endTime);
  };
  const exportSync = (): void => {
    recorder.halt();
    const ms = left();
    const reopen = options.reopen;
    if (!reopen) return;
    recorder.exportSync((records) => exportRecordsSync([{ spec: reopen, records }], ms));
  };
  return installExitFlush(flush, { closeOpenSpans: endLive, exportSync });
}
