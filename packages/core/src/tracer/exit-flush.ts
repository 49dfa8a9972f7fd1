/** How long a signal handler, or the synchronous export at exit, waits for the store before giving up. */
const EXIT_FLUSH_TIMEOUT_MS = 5_000;

/** What {@link installExitFlush} does besides the asynchronous flush. */
export interface ExitFlushHooks {
  /** Ends every span still open with an ERROR status and `message` (the spans a crash cut off). */
  closeOpenSpans?: (message: string) => void;
  /** Exports, synchronously, what is still queued or in flight (`process.on('exit')` runs no promise). */
  exportSync?: (timeoutMs: number) => void;
}

const endCallbacks = new Set<() => void>();

/**
 * Registers `callback` to run, synchronously, when the process ends (exit, crash or signal) before the open spans are
 * closed with an error: an adapter ends there what it can end better itself (an unread stream, marked as such).
 * Returns an unregister function.
 */
export function onProcessEnd(callback: () => void): () => void {
  endCallbacks.add(callback);
  return () => endCallbacks.delete(callback);
}

function runEndCallbacks(): void {
  for (const callback of endCallbacks) {
    try {
      callback();
    } catch {
      // an adapter's clean-up must not change how the process ends
    }
  }
}

function describeCrash(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * Makes sure a process that ends loses no span, however it ends:
 * - `beforeExit` (the loop ran dry): the queued spans are flushed asynchronously;
 * - `process.exit(n)`, an uncaught exception, an unhandled rejection, a rejected top-level await: on `exit` the spans
 *   still open are ended with an ERROR status (naming the crash, seen through `uncaughtExceptionMonitor`, or the exit
 *   code) and everything not yet in the store is exported synchronously (`hooks.exportSync`);
 * - SIGTERM / SIGINT: the open spans are closed the same way and flushed; the handler removes itself first and, if it
 *   was the only listener, re-raises the signal so the default behaviour (exit with the signal) still happens.
 *
 * No listener here changes the exit code or what the process prints: `uncaughtExceptionMonitor` only observes, and
 * `exit` runs after Node printed the error. Returns an uninstall function.
 */
export function installExitFlush(flush: () => Promise<void>, hooks: ExitFlushHooks = {}): () => void {
  let flushing: Promise<void> | null = null;
  let crash: { error: unknown } | null = null;
  const flushOnce = (): Promise<void> => {
    flushing ??= flush()
      .catch(() => undefined)
      .finally(() => {
        flushing = null;
      });
    return flushing;
  };
  const closeOpen = (message: string): void => {
    runEndCallbacks();
    hooks.closeOpenSpans?.(message);
  };
  const onBeforeExit = (): void => {
    // Async work here keeps the loop alive; `beforeExit` fires again afterwards with nothing left to flush.
    void flushOnce();
  };
  const onCrash = (error: unknown): void => {
    crash ??= { error };
  };
  const onExit = (code: number): void => {
    closeOpen(
      crash
        ? `the process crashed: ${describeCrash(crash.error)}`
        : `the process exited with code ${code} before the span ended`,
    );
    hooks.exportSync?.(EXIT_FLUSH_TIMEOUT_MS);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    const othersHandle = process.listenerCount(signal) > 0;
    // Another handler decides whether the process ends; if it calls process.exit(), `exit` closes what is left.
    if (!othersHandle) closeOpen(`the process got ${signal} before the span ended`);
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, EXIT_FLUSH_TIMEOUT_MS).unref());
    void Promise.race([flushOnce(), timeout]).then(() => {
      process.removeListener('beforeExit', onBeforeExit);
      if (!othersHandle) {
        process.removeListener('exit', onExit);
        process.kill(process.pid, signal);
      }
    });
  };
  process.on('beforeExit', onBeforeExit);
  process.on('uncaughtExceptionMonitor', onCrash);
  process.on('exit', onExit);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.removeListener('beforeExit', onBeforeExit);
    process.removeListener('uncaughtExceptionMonitor', onCrash);
    process.removeListener('exit', onExit);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
  };
}
