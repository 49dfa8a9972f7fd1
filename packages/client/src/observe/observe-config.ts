import { ValidationError } from '@agl/core/errors';
import { fromWire, newAttemptId, newRolloutId } from '@agl/core/schema';
import { DEFAULT_LLM_CALL_MATCH } from '@agl/core/semconv';
import { applyRecords, type LightningStore, type ProductionRecord, type ServingResources } from '@agl/core/store';
import {
  getAglTracer,
  preciseNowMs,
  setUnownedSpanHandler,
  storeReopenSpec,
  type RolloutContext,
} from '@agl/core/tracer';
import { StoreClient } from '../store-client';
import { emptyStats, Recorder, type ObserveLogger, type ObserveStats } from './recorder';
import { installRecorderExit } from './recorder-exit';
import { recordRedaction, type RedactFn, type RedactOptions } from './redact';
import { loadServing } from './release-assignment';
import { ResourcesCache } from './resources-cache';
import { DEFAULT_UNSCOPED_PER_SECOND, UnscopedLimiter } from './unscoped-limiter';

/** Options of {@link configureObserve} (each falls back to its environment variable, then to its default). */
export interface ConfigureObserveOptions {
  /**
   * Where rollouts go: the store server's URL (`agl store serve`; env `AGL_STORE_URL`) or a `LightningStore` instance
   * for in-process use. Without either nothing is recorded (one warning) and `observe` just runs `fn`.
   */
  store?: string | LightningStore;
  /** Bearer token of the store server (env `AGL_STORE_TOKEN`). */
  token?: string;
  /** Share of requests recorded, 0 to 1 (env `AGL_SAMPLE_RATE`); the others run untouched. Default 1. */
  sampleRate?: number;
  /** Most records held while the store is slow or down. Default 10,000. */
  maxBufferedRecords?: number;
  /** Most bytes (JSON characters) held while the store is slow or down. Default 64 MiB. */
  maxBufferedBytes?: number;
  /**
   * Secrets masked before export. Default: the built-in detectors (see SECURITY.md) over spans (prompts, completions,
   * tool-call arguments, tool definitions, events) and rollout input and metadata, plus the patterns of
   * `AGL_REDACT_PATTERNS`. `{ patterns }` adds regular expressions; a function sees each span's attributes instead
   * (input and metadata still get the built-in engine); `false` exports everything as it is.
   */
  redact?: RedactFn | RedactOptions | false;
  /**
   * An LLM call made outside any rollout becomes a one-call rollout (`metadata.source = "unscoped"`); `false` (env
   * `AGL_UNSCOPED=0`) only counts it (`observeStats().unscoped`) and warns once. Default true.
   */
  unscoped?: boolean;
  /**
   * Most one-call rollouts per second for LLM calls outside any rollout (env `AGL_UNSCOPED_PER_SECOND`). Calls past it
   * are counted (`observeStats().unscopedFolded`) and recorded as one rollout per minute (`metadata.source =
   * "unscoped"`, `metadata.folded_calls`: how many). Default 50; 0 folds every such call.
   */
  unscopedPerSecond?: number;
  /** Clock of the unscoped rate bound, epoch ms (for tests). Default `Date.now`. */
  unscopedClock?: () => number;
  /** Default `metadata.agent_name` of every rollout (`observe`'s `agentName` wins). */
  agentName?: string;
  /** How long `rollout.resources` is served from cache before a background refresh, ms. Default 5,000. */
  resourcesTtlMs?: number;
  /** How long the first request waits for the first resources read, ms (later ones never wait). Default 100. */
  resourcesFirstWaitMs?: number;
  /**
   * How long the process end may wait for the store, ms, however the process ends (`beforeExit`, `process.exit`, an
   * uncaught exception or unhandled rejection, SIGTERM / SIGINT): past it the request in flight is aborted and the rest
   * is dropped. Default 5,000; `0` installs no hook.
   */
  exitFlushTimeoutMs?: number;
  /** Where warnings go. Default `console`. */
  logger?: ObserveLogger;
}

/** The configured recorder and its settings. */
export interface Observer {
  recorder: Recorder | null;
  store: LightningStore | null;
  sampleRate: number;
  agentName: string | undefined;
  resources: ResourcesCache<ServingResources> | null;
  logger: ObserveLogger;
  uninstall: () => void;
  /** Records the current minute's unscoped calls folded by the rate bound now (on shutdown and exit). */
  drainUnscoped?: () => void;
}

let current: Observer | null = null;
const warnedOnce = new Set<string>();
/** A buffered record (wire JSON) back as a record, for a store in this process. */
const decodeRecord = (json: string): ProductionRecord =>
  fromWire('productionRecord', JSON.parse(json)) as ProductionRecord;

/** Logs `message` the first time `key` is seen. */
export function warnOnce(logger: ObserveLogger, key: string, message: string): void {
  if (warnedOnce.has(key)) return;
  warnedOnce.add(key);
  logger.warn(message);
}

function sampleRateFrom(value: number | string | undefined, logger: ObserveLogger): number {
  if (value === undefined || value === '') return 1;
  const rate = typeof value === 'number' ? value : Number(value);
  if (Number.isFinite(rate) && rate >= 0 && rate <= 1) return rate;
  warnOnce(
    logger,
    `sampleRate:${String(value)}`,
    `[agl observe] sampleRate / AGL_SAMPLE_RATE=${JSON.stringify(value)} is not a number from 0 to 1; recording every ` +
      'request (1). Set it to e.g. 0.25 to record a quarter of the requests.',
  );
  return 1;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new ValidationError(`configureObserve: ${name} must be a positive number (got ${String(value)}).`);
  }
  return value;
}

/**
 * Configures production recording for the process (`observe`, `observeHandler`, `observeFetch`, `feedback`). Options
 * not given come from `AGL_STORE_URL`, `AGL_STORE_TOKEN`, `AGL_SAMPLE_RATE` and `AGL_UNSCOPED`; calling it again
 * replaces the configuration (records already queued are still exported). Without any call, the first `observe`
 * configures from the environment alone.
 */
export function configureObserve(options: ConfigureObserveOptions = {}): void {
  const previous = current;
  current = null;
  if (previous) {
    previous.uninstall();
    void previous.recorder?.flush();
  }
  current = createObserver(options, process.env);
}

/** The configured observer, configured from the environment on first use. */
export function getObserver(): Observer {
  current ??= createObserver({}, process.env);
  return current;
}

/**
 * Flushes and stops recording: waits (at most `timeoutMs`) for queued records, then removes the exit hooks and the
 * unscoped-call hook. A later `observe` configures again from the environment.
 */
export async function shutdownObserve(timeoutMs = 5_000): Promise<void> {
  const observer = current;
  current = null;
  if (!observer) return;
  observer.uninstall();
  observer.drainUnscoped?.();
  await flushRecorder(observer, timeoutMs);
  observer.recorder?.close();
}

/**
 * Exports everything recorded so far (spans still in the tracer's queue included) and waits for it, at most
 * `timeoutMs` (default 5,000). Returns true when the buffer emptied in time. Never throws.
 */
export async function flushObserve(timeoutMs = 5_000): Promise<boolean> {
  return current ? flushRecorder(current, timeoutMs) : true;
}

async function flushRecorder(observer: Observer, timeoutMs: number): Promise<boolean> {
  if (!observer.recorder) return true;
  const deadline = Date.now() + timeoutMs;
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    getAglTracer().forceFlush(),
    new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
  ]).catch(() => undefined);
  clearTimeout(timer);
  return observer.recorder.flush(Math.max(0, deadline - Date.now()));
}

/** Counters of the recorder: `recorded`, `sampledOut`, `buffered`, `dropped`, `exported`, `failedExports`, ... */
export function observeStats(): ObserveStats {
  return getObserver().recorder?.stats() ?? emptyStats();
}

function createObserver(options: ConfigureObserveOptions, env: NodeJS.ProcessEnv): Observer {
  const logger = options.logger ?? console;
  // An empty URL (`store: process.env.AGL_STORE_URL` with the variable set to '') means no store, like an unset one.
  const target = options.store || env.AGL_STORE_URL || undefined;
  const sampleRate = sampleRateFrom(options.sampleRate ?? env.AGL_SAMPLE_RATE, logger);
  const base = { sampleRate, agentName: options.agentName, logger };
  if (target === undefined) return { ...base, recorder: null, store: null, resources: null, uninstall: () => {} };
  const token = options.token ?? (env.AGL_STORE_TOKEN || undefined);
  // No retries inside the client: the recorder retries with its own backoff, and a resources read must stay short.
  const clientOptions = { url: String(target), ...(token ? { token } : {}), retryDelays: [], healthRetryDelays: [] };
  const client = typeof target === 'string' ? new StoreClient(clientOptions) : null;
  // The recorder's exports and the resources reads run in the background: they never keep the process alive (the exit
  // path flushes with its own deadline). `feedback` uses `client`, whose requests a script awaits.
  const background = typeof target === 'string' ? new StoreClient({ ...clientOptions, unrefRequests: true }) : null;
  const store: LightningStore = client ?? (target as LightningStore);
  const redact = recordRedaction(options.redact, env, (message) => warnOnce(logger, 'redactEnv', message));
  const reopen = client ? storeReopenSpec(client as LightningStore) : undefined;
  const recorder = new Recorder({
    send: background
      ? (records, signal) => background.applyEncodedRecords(records, { retry: false, signal })
      : (records) => applyRecords(store, records.map(decodeRecord)),
    maxBufferedRecords: positive('maxBufferedRecords', options.maxBufferedRecords, 10_000),
    maxBufferedBytes: positive('maxBufferedBytes', options.maxBufferedBytes, 64 * 1024 * 1024),
    maxBatchRecords: 500,
    maxBatchBytes: 4 * 1024 * 1024,
    flushDelayMs: 50,
    minBackoffMs: 100,
    maxBackoffMs: 3_000,
    redact,
    logger,
    // The exit exporter thread starts only at exit (warmed on the first record, its second V8 isolate held about
    // 26 MB of RSS for the whole life of the service); the exit then also pays its start and the client's import.
  });
  const resources = new ResourcesCache({
    load: () => loadServing(background ?? store),
    ttlMs: options.resourcesTtlMs ?? 5_000,
    firstWaitMs: options.resourcesFirstWaitMs ?? 100,
    onError: (error) =>
      warnOnce(logger, 'resources', `[agl observe] could not read the latest resources: ${String(error)}`),
  });
  const unscoped = options.unscoped ?? env.AGL_UNSCOPED !== '0';
  const agentMetadata: Record<string, string> = options.agentName ? { agent_name: options.agentName } : {};
  const perSecondEnv = env.AGL_UNSCOPED_PER_SECOND;
  const limiter = new UnscopedLimiter({
    perSecond: options.unscopedPerSecond ?? (perSecondEnv ? Number(perSecondEnv) : DEFAULT_UNSCOPED_PER_SECOND),
    now: options.unscopedClock,
    emit: ({ startMs, calls }) => {
      const rolloutId = newRolloutId();
      const attemptId = newAttemptId();
      const folded = { source: 'unscoped', folded_calls: calls, ...agentMetadata };
      if (
        recorder.start({
          rolloutId,
          attemptId,
          input: { folded_calls: calls },
          metadata: folded,
          startTime: startMs / 1000,
        })
      )
        recorder.end(rolloutId, attemptId, 'succeeded', (startMs + 60_000) / 1000);
    },
  });
  const previousHandler = setUnownedSpanHandler((span) => {
    // An LLM call, or an agent run (its root span: agent, workflow, chain), outside any rollout: one rollout holds it
    // and every span under it (agent, tool, handoff and LLM spans alike), ended with the root span.
    const llmCall = DEFAULT_LLM_CALL_MATCH.test(span.name);
    if (!unscoped && !llmCall) return undefined;
    // An agent run is counted (and recorded) once it makes an LLM call (`deferred` below).
    if (llmCall) recorder.countUnscoped();
    if (!unscoped) {
      warnOnce(
        logger,
        'unscoped',
        `[agl observe] an LLM call ('${span.name}') ran outside any rollout and was not recorded (unscoped: false / ` +
          'AGL_UNSCOPED=0); such calls are counted in observeStats().unscoped. Wrap the request in observe() to record it.',
      );
      return undefined;
    }
    if (!limiter.take()) {
      recorder.countUnscopedFolded();
      return undefined;
    }
    const rolloutId = newRolloutId();
    const attemptId = newAttemptId();
    const metadata = { source: 'unscoped', ...agentMetadata };
    const startTime = preciseNowMs() / 1000;
    const rootSpanId = span.spanContext().spanId;
    if (
      !recorder.start(
        { rolloutId, attemptId, input: null, metadata, startTime },
        { unscoped: true, rootSpanId, deferred: !llmCall },
      )
    )
      return undefined;
    return {
      rolloutId,
      attemptId,
      store: recorder.store,
      wireSpanSink: recorder.wireSpanSink,
      mode: null,
    } satisfies RolloutContext;
  });
  const exitMs = options.exitFlushTimeoutMs ?? 5_000;
  const observer: Observer = { ...base, recorder, store, resources, uninstall: () => {} };
  // The AGL tracer's own exit hook must be installed first: on `exit` it closes the open spans and hands them to the
  // recorder before ours exports the buffer, and on a signal the last hook to run (ours) re-raises it once done.
  getAglTracer();
  const uninstallExit =
    exitMs > 0
      ? installRecorderExit(recorder, {
          timeoutMs: exitMs,
          reopen,
          flush: (ms) => {
            // The current minute's folded unscoped calls are recorded before the last flush.
            limiter.drain();
            return flushRecorder(observer, ms);
          },
        })
      : null;
  observer.drainUnscoped = () => limiter.drain();
  observer.uninstall = () => {
    uninstallExit?.();
    setUnownedSpanHandler(previousHandler);
  };
  return observer;
}

/**
 * For the adapters' `register` preloads: when `AGL_STORE_URL` is set and the process is not a runner's process agent
 * (no `AGL_ROLLOUT_ID`), configures recording from the environment now, so LLM calls made outside any `observe`
 * become one-call rollouts from the first call on. Returns true when it did.
 */
export function initObserveFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  if (!env.AGL_STORE_URL || env.AGL_ROLLOUT_ID) return false;
  getObserver();
  return true;
}
