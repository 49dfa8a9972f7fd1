import { UserError } from '../errors/index';
import type { LightningStore } from '../store/index';
import { getAglTracer } from './agl-tracer';
import { setProcessRolloutContext, type RolloutContext } from './rollout-context';

/** Options of {@link installProcessRolloutFromEnv}. */
export interface ProcessRolloutEnvOptions {
  /** Builds the store client for `AGL_STORE_URL` (core cannot import `@agl/store`, so the caller passes `StoreClient`). */
  createStore: (options: { url: string; token?: string }) => LightningStore | Promise<LightningStore>;
  /** Environment to read (default `process.env`). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The shared start of every `node --import @agl/<fw>/register` preload (DESIGN.md Contract 1): makes sure the AGL
 * tracer exists (flushing on exit; never registered globally, see `getAglTracer`), and when the runner set `AGL_ROLLOUT_ID`, `AGL_ATTEMPT_ID` and
 * `AGL_STORE_URL`, makes that rollout the process-wide owner of every span (token from `AGL_STORE_TOKEN` or `AGL_KEY`).
 * Without those variables spans belong to the in-process rollout context the runner enters (embedded store).
 * Returns the process rollout context, or `undefined`.
 */
export async function installProcessRolloutFromEnv(
  options: ProcessRolloutEnvOptions,
): Promise<RolloutContext | undefined> {
  const env = options.env ?? process.env;
  const tracer = getAglTracer();
  const rolloutId = env.AGL_ROLLOUT_ID;
  const attemptId = env.AGL_ATTEMPT_ID;
  const url = env.AGL_STORE_URL;
  if (!rolloutId && !attemptId) return undefined;
  if (!rolloutId || !attemptId || !url) {
    throw new UserError(
      `AGL preload: AGL_ROLLOUT_ID=${JSON.stringify(rolloutId ?? null)}, AGL_ATTEMPT_ID=${JSON.stringify(attemptId ?? null)} ` +
        `and AGL_STORE_URL=${JSON.stringify(url ?? null)} must be set together; set all three (the runner does) or none.`,
    );
  }
  const token = env.AGL_STORE_TOKEN ?? env.AGL_KEY;
  const store = await options.createStore(token ? { url, token } : { url });
  const ctx: RolloutContext = { rolloutId, attemptId, store, tracer };
  setProcessRolloutContext(ctx);
  return ctx;
}
