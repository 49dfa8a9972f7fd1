/**
 * Span work moved off the caller's path. An adapter that finishes a span where the app waits for the result (the LLM
 * answer its caller awaits) queues the attribute writing and the span's end here, with the end time taken at once: the
 * work runs on the next turn of the event loop (after the app has sent its response), or earlier whenever a tracer
 * hands spans over (`whenExported`, `forceFlush`, `afterSpansHanded`, closing open spans, the exit export), so a
 * rollout's end never overtakes its spans and nothing is left behind at exit.
 */
const jobs: Array<() => void> = [];
let timer: ReturnType<typeof setImmediate> | null = null;
let running = false;

/** Queues `job` (it must not throw; a throw is swallowed: recording never fails the app). */
export function deferSpanWork(job: () => void): void {
  jobs.push(job);
  timer ??= setImmediate(runDeferredSpanWork);
}

/** Runs every queued job now, oldest first (jobs queued meanwhile included; a nested call returns at once). */
export function runDeferredSpanWork(): void {
  if (running) return;
  if (timer) clearImmediate(timer);
  timer = null;
  running = true;
  try {
    for (let i = 0; i < jobs.length; i += 1) {
      try {
        jobs[i]!();
      } catch {
        // recording never throws into the app
      }
    }
  } finally {
    jobs.length = 0;
    running = false;
  }
}
