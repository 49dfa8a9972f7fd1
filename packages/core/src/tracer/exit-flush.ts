/** How long a signal handler waits for the flush before letting the signal through. */
const SIGNAL_FLUSH_TIMEOUT_MS = 5_000;

/**
 * Flushes on `beforeExit`, SIGTERM and SIGINT, so short-lived agents and preloads lose nothing. A signal handler removes
 * itself first; if it was the only listener, it re-raises the signal after the flush so the default behaviour (exit
 * with the signal) still happens, and a second Ctrl-C exits at once. Returns an uninstall function.
 *
 * `process.exit()` cannot be intercepted asynchronously: call `forceFlush()` before it.
 */
export function installExitFlush(flush: () => Promise<void>): () => void {
  let flushing: Promise<void> | null = null;
  const flushOnce = (): Promise<void> => {
    flushing ??= flush()
      .catch(() => undefined)
      .finally(() => {
        flushing = null;
      });
    return flushing;
  };
  const onBeforeExit = (): void => {
    // Async work here keeps the loop alive; `beforeExit` fires again afterwards with nothing left to flush.
    void flushOnce();
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
    const othersHandle = process.listenerCount(signal) > 0;
    const timeout = new Promise<void>((resolve) => setTimeout(resolve, SIGNAL_FLUSH_TIMEOUT_MS).unref());
    void Promise.race([flushOnce(), timeout]).then(() => {
      process.removeListener('beforeExit', onBeforeExit);
      if (!othersHandle) process.kill(process.pid, signal);
    });
  };
  process.on('beforeExit', onBeforeExit);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return () => {
    process.removeListener('beforeExit', onBeforeExit);
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
  };
}
