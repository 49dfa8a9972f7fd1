import { ATTR_ATTEMPT_ID, ATTR_ROLLOUT_ID } from '@agl/core/semconv';
import { proxyLlmBaseUrl, type AttemptedRollout, type NamedResources } from '@agl/core';

/** Where a process agent reaches the store (a loopback server the runner started, or `--store-url`). */
export interface ProcessEndpoints {
  storeUrl: string;
  /** Bearer token of the store (and gateway); handed to the agent as `AGL_KEY`. */
  token?: string | null;
  /** Overrides the LLM base URL taken from the resources. */
  openAiBaseUrl?: string | null;
  /** An AGL gateway: agents get its rollout-scoped URL (`/rollout/{r}/attempt/{a}/v1`) as `AGL_OPENAI_BASE_URL`. */
  gatewayUrl?: string | null;
}

/** The first LLM resource's base URL for this attempt (a `proxy_llm` is scoped to the rollout and attempt). */
export function llmBaseUrl(
  resources: NamedResources,
  rolloutId: string,
  attemptId: string,
): { url: string; model: string; apiKey: string | null } | null {
  for (const resource of Object.values(resources)) {
    if (resource.resourceType === 'llm')
      return { url: resource.endpoint, model: resource.model, apiKey: resource.apiKey };
    if (resource.resourceType === 'proxy_llm')
      return {
        url: proxyLlmBaseUrl(resource.endpoint, rolloutId, attemptId),
        model: resource.model,
        apiKey: resource.apiKey,
      };
  }
  return null;
}

/**
 * The env contract of DESIGN.md Contract 1 / 2b for one attempt: AGL 1.0's `AGL_OPENAI_BASE_URL`, `AGL_EVENT_URL`,
 * `AGL_KEY`; ours `AGL_TASK_INPUT`, `AGL_MODE`, `AGL_ROLLOUT_ID`, `AGL_ATTEMPT_ID`, `AGL_STORE_URL`; and the OTel
 * exporter variables so any OTLP SDK sends its spans to the store with the right owner.
 */
export function processAgentEnv(options: {
  rollout: AttemptedRollout;
  resources: NamedResources;
  resourcesId: string | null;
  endpoints: ProcessEndpoints;
}): Record<string, string> {
  const { rollout, resources, endpoints } = options;
  const rolloutId = rollout.rolloutId;
  const attemptId = rollout.attempt.attemptId;
  const store = endpoints.storeUrl.replace(/\/+$/u, '');
  const llm = llmBaseUrl(resources, rolloutId, attemptId);
  const key = endpoints.token ?? llm?.apiKey ?? '';
  const env: Record<string, string> = {
    AGL_ROLLOUT_ID: rolloutId,
    AGL_ATTEMPT_ID: attemptId,
    AGL_STORE_URL: store,
    AGL_EVENT_URL: `${store}/api/rollouts/${encodeURIComponent(rolloutId)}/attempt/${encodeURIComponent(attemptId)}/events`,
    AGL_KEY: key,
    AGL_TASK_INPUT: JSON.stringify(rollout.input ?? null),
    AGL_MODE: rollout.mode ?? '',
    AGL_RESOURCES: JSON.stringify(resources),
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${store}/v1/traces`,
    // Python has no OTLP/JSON exporter, and code that picks one from this variable rejects http/json; the store
    // accepts both encodings, so name the one every SDK has.
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
    OTEL_RESOURCE_ATTRIBUTES: `${ATTR_ROLLOUT_ID}=${encodeURIComponent(rolloutId)},${ATTR_ATTEMPT_ID}=${encodeURIComponent(attemptId)}`,
  };
  if (options.resourcesId) env.AGL_RESOURCES_ID = options.resourcesId;
  const gateway = endpoints.gatewayUrl
    ? `${endpoints.gatewayUrl.replace(/\/+$/u, '')}/rollout/${encodeURIComponent(rolloutId)}/attempt/${encodeURIComponent(attemptId)}/v1`
    : null;
  const base = endpoints.openAiBaseUrl ?? gateway ?? llm?.url;
  if (base) env.AGL_OPENAI_BASE_URL = base;
  if (llm) env.AGL_MODEL = llm.model;
  if (endpoints.token) env.OTEL_EXPORTER_OTLP_HEADERS = `Authorization=Bearer%20${endpoints.token}`;
  return env;
}
