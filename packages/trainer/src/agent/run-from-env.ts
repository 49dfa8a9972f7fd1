import type { NamedResources } from '@agl/core';
import { UserError } from '@agl/core/errors';
import { toLitAgent, pickRolloutFn, type AgentLike, type AgentContext } from './lit-agent';

/** What {@link runFromEnv} did. */
export interface RunFromEnvResult {
  reward: number | null;
  /** True when the reward was posted to `AGL_EVENT_URL`. */
  posted: boolean;
}

/** Read the env contract: task input, mode and the LLM resource (AGL 1.0 `AGL_OPENAI_BASE_URL` / `AGL_KEY`). */
export function readAgentEnv(env: NodeJS.ProcessEnv = process.env): {
  task: unknown;
  mode: 'train' | 'val' | 'test' | null;
  resources: NamedResources;
  rolloutId: string;
  attemptId: string;
} {
  const raw = env.AGL_TASK_INPUT;
  let task: unknown = null;
  if (raw !== undefined && raw !== '') {
    try {
      task = JSON.parse(raw) as unknown;
    } catch {
      task = raw;
    }
  }
  const eventUrl = env.AGL_EVENT_URL ?? '';
  const ids = /\/rollouts\/([^/]+)\/attempt\/([^/]+)\/events/u.exec(eventUrl);
  const baseUrl = env.AGL_OPENAI_BASE_URL ?? '';
  const urlMode = /\/mode\/(train|val|test)\//u.exec(baseUrl)?.[1];
  const modeText = env.AGL_MODE || urlMode || null;
  const mode = modeText === 'train' || modeText === 'val' || modeText === 'test' ? modeText : null;
  let resources: NamedResources = {};
  if (env.AGL_RESOURCES) {
    try {
      resources = JSON.parse(env.AGL_RESOURCES) as NamedResources;
    } catch {
      resources = {};
    }
  }
  const llmKey = Object.keys(resources).find(
    (k) => resources[k]?.resourceType === 'llm' || resources[k]?.resourceType === 'proxy_llm',
  );
  if (llmKey) {
    // The env contract wins: AGL_OPENAI_BASE_URL is the rollout-scoped URL, AGL_KEY the key when the resource has none.
    const llm = resources[llmKey] as Extract<NamedResources[string], { resourceType: 'llm' | 'proxy_llm' }>;
    resources = {
      ...resources,
      [llmKey]: {
        ...llm,
        resourceType: 'llm',
        endpoint: baseUrl || llm.endpoint,
        apiKey: llm.apiKey ?? env.AGL_KEY ?? null,
      },
    };
  } else if (baseUrl) {
    resources = {
      ...resources,
      llm: {
        resourceType: 'llm',
        endpoint: baseUrl,
        model: env.AGL_MODEL || 'default',
        apiKey: env.AGL_KEY ?? null,
        samplingParameters: {},
      },
    };
  }
  return {
    task,
    mode,
    resources,
    rolloutId: env.AGL_ROLLOUT_ID ?? (ids ? decodeURIComponent(ids[1]!) : 'local'),
    attemptId: env.AGL_ATTEMPT_ID ?? (ids ? decodeURIComponent(ids[2]!) : 'local'),
  };
}

/** POST `{"event_type":"reward","data":{"value":…}}` to `AGL_EVENT_URL` with `AGL_KEY` as bearer. */
export async function postRewardEvent(eventUrl: string, value: number, key?: string): Promise<void> {
  const res = await fetch(eventUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ event_type: 'reward', data: { value } }),
  });
  if (!res.ok)
    throw new UserError(
      `Posting the reward to AGL_EVENT_URL=${eventUrl} failed with HTTP ${res.status}: ${await res.text()}`,
    );
}

/**
 * Run a TypeScript agent once under the env contract (AGL 1.0's controller, or our `processAgent` runner): read
 * `AGL_TASK_INPUT`, give the agent an LLM resource from `AGL_OPENAI_BASE_URL` / `AGL_KEY`, and post a numeric
 * return value as a reward event to `AGL_EVENT_URL`. Sets `process.exitCode` (0 on success, 1 on a throw) unless
 * `exit: false`.
 *
 * @example
 * // agent-main.ts, started by the controller or by processAgent({ command: 'node', args: ['agent-main.js'] })
 * await runFromEnv(async (task, resources) => score(await solve(task, resources)));
 */
export async function runFromEnv(
  agent: AgentLike,
  options: { env?: NodeJS.ProcessEnv; exit?: boolean } = {},
): Promise<RunFromEnvResult> {
  const env = options.env ?? process.env;
  const lit = toLitAgent(agent);
  const { task, mode, resources, rolloutId, attemptId } = readAgentEnv(env);
  const abort = new AbortController();
  const context = {
    rollout: { rolloutId, input: task, mode, attempt: { rolloutId, attemptId } },
    rolloutId,
    attemptId,
    mode,
    workerId: env.AGL_WORKER_ID ?? 'env',
    store: undefined,
    resourcesId: env.AGL_RESOURCES_ID ?? null,
    signal: abort.signal,
  } as unknown as AgentContext;
  try {
    const result = await pickRolloutFn(lit, mode)(task as never, resources, context);
    const reward = typeof result === 'boolean' ? Number(result) : typeof result === 'number' ? result : null;
    let posted = false;
    if (reward !== null && env.AGL_EVENT_URL) {
      await postRewardEvent(env.AGL_EVENT_URL, reward, env.AGL_KEY);
      posted = true;
    }
    if (options.exit !== false) process.exitCode = 0;
    return { reward, posted };
  } catch (err) {
    if (options.exit !== false) {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    }
    throw err;
  }
}
