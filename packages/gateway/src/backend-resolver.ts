import { NotFoundError, UserError } from '@agl/core/errors';
import type { NamedResources, ResourcesUpdate, Rollout, RolloutMode } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** A model backend: an OpenAI-compatible base URL (`http://127.0.0.1:8000/v1`) and its API key. */
export interface BackendConfig {
  /** Base URL including `/v1`. */
  baseUrl: string;
  /** Sent upstream as `Authorization: Bearer` (and `x-api-key` for Anthropic passthrough); never logged or stored. */
  apiKey?: string | null;
}

/** Where one call goes and what it overrides. */
export interface ResolvedTarget {
  /** Backend base URL, without a trailing slash. */
  baseUrl: string;
  apiKey: string | null;
  /** Model name to request, from the LLM resource or config; `null` keeps the client's. */
  model: string | null;
  /** Sampling parameters of the LLM resource (applied on training calls). */
  sampling: Record<string, unknown>;
  /** The resources the route came from, if any. */
  resourcesId: string | null;
}

/** A rollout-scoped call, resolved. */
export interface ResolvedScope {
  rolloutId: string;
  attemptId: string;
  /** The path's mode (AGL 1.0 URLs), else the rollout's. */
  mode: RolloutMode;
  target: ResolvedTarget;
}

/** Options of {@link BackendResolver}. */
export interface BackendResolverOptions {
  store: LightningStore;
  /** The configured backend; used when the resources name no `llm` endpoint. */
  backend: BackendConfig | null;
  /** Configured model override. */
  model: string | null;
  /** Name of the LLM resource to route by; default `main_llm`, else the first LLM resource. */
  llmResourceName: string | null;
  /** How long rollouts and resources are cached, in milliseconds (0 = no cache). */
  cacheTtlMs: number;
  /** Milliseconds clock. */
  nowMs: () => number;
  /** The gateway's own origin, so a resource pointing back at the gateway is not followed. */
  selfOrigin: () => string | null;
}

interface Cached<T> {
  value: T;
  expires: number;
}

const trimSlash = (url: string): string => (url.endsWith('/') ? url.slice(0, -1) : url);

/**
 * Picks the backend of each call (DESIGN.md Contract 4): the LLM resource of the rollout's `resourcesId`, the latest
 * resources when the rollout has none, else the configured backend. Caches rollouts and resources for a short time.
 */
export class BackendResolver {
  readonly #o: BackendResolverOptions;
  #rollouts = new Map<string, Cached<Rollout>>();
  #resources = new Map<string, Cached<ResourcesUpdate | null>>();

  constructor(options: BackendResolverOptions) {
    this.#o = options;
  }

  /** Resolves a rollout-scoped call; throws `NotFoundError` for an unknown rollout. */
  async resolveScoped(rolloutId: string, attemptId: string, pathMode: RolloutMode): Promise<ResolvedScope> {
    const rollout = await this.#rollout(rolloutId);
    const resources = await this.#resourcesFor(rollout.resourcesId);
    return { rolloutId, attemptId, mode: pathMode ?? rollout.mode, target: this.#target(resources) };
  }

  /** Resolves a call without a rollout: the configured backend, else the latest resources. */
  async resolveUnscoped(): Promise<ResolvedTarget> {
    if (this.#o.backend) return this.#target(null);
    return this.#target(await this.#resourcesFor(null));
  }

  /** Forgets cached rollouts and resources. */
  invalidate(): void {
    this.#rollouts.clear();
    this.#resources.clear();
  }

  async #rollout(rolloutId: string): Promise<Rollout> {
    const now = this.#o.nowMs();
    const hit = this.#rollouts.get(rolloutId);
    if (hit && hit.expires > now) return hit.value;
    const rollout = await this.#o.store.getRolloutById(rolloutId);
    if (!rollout) {
      throw new NotFoundError('rollout', rolloutId, `Rollout "${rolloutId}" is not in the store. Use the base URL the runner gave this attempt, or enqueue/start the rollout first.`);
    }
    if (this.#o.cacheTtlMs > 0) this.#rollouts.set(rolloutId, { value: rollout, expires: now + this.#o.cacheTtlMs });
    return rollout;
  }

  async #resourcesFor(resourcesId: string | null): Promise<ResourcesUpdate | null> {
    const key = resourcesId ?? '\u0000latest';
    const now = this.#o.nowMs();
    const hit = this.#resources.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = resourcesId === null ? await this.#o.store.getLatestResources() : await this.#o.store.getResourcesById(resourcesId);
    if (this.#o.cacheTtlMs > 0) this.#resources.set(key, { value, expires: now + this.#o.cacheTtlMs });
    return value;
  }

  #pickLlm(resources: NamedResources): NamedResources[string] | null {
    const name = this.#o.llmResourceName;
    if (name !== null) return resources[name] ?? null;
    const main = resources.main_llm;
    if (main && main.resourceType !== 'prompt_template') return main;
    return Object.values(resources).find((r) => r.resourceType === 'llm') ?? Object.values(resources).find((r) => r.resourceType === 'proxy_llm') ?? null;
  }

  #target(update: ResourcesUpdate | null): ResolvedTarget {
    const configured = this.#o.backend;
    const llm = update ? this.#pickLlm(update.resources) : null;
    let baseUrl = configured ? trimSlash(configured.baseUrl) : null;
    let apiKey = configured?.apiKey ?? null;
    let model = this.#o.model;
    let sampling: Record<string, unknown> = {};
    if (llm && llm.resourceType !== 'prompt_template') {
      model = llm.model;
      sampling = llm.samplingParameters;
      if (llm.resourceType === 'llm' && !this.#pointsAtSelf(llm.endpoint)) {
        baseUrl = trimSlash(llm.endpoint);
        apiKey = llm.apiKey ?? apiKey;
      }
    }
    if (baseUrl === null) {
      throw new UserError(
        'The gateway has no backend for this call: no --backend was configured and the resources name no "llm" endpoint. ' +
          'Start the gateway with --backend http://host:port/v1, or publish an LLM resource with an endpoint.',
      );
    }
    return { baseUrl, apiKey, model, sampling, resourcesId: update?.resourcesId ?? null };
  }

  #pointsAtSelf(endpoint: string): boolean {
    const self = this.#o.selfOrigin();
    if (self === null) return false;
    try {
      return new URL(endpoint).origin === self;
    } catch {
      return false;
    }
  }
}
