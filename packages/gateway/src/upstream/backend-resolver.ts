import { NotFoundError, UserError } from '@agl/core/errors';
import {
  isAttemptedRollout,
  type NamedResources,
  type ResourcesUpdate,
  type Rollout,
  type RolloutMode,
} from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { RequestRefusedError } from '../routes/call-errors';
import { BackendEndpoint } from './backend-endpoint';
import { noTinkerRoute, type TinkerRoute } from './tinker-routing';

/** A model backend: an OpenAI-compatible base URL (`http://127.0.0.1:8000/v1`) and its API key. */
export interface BackendConfig {
  /** Base URL including `/v1`. */
  baseUrl: string;
  /** Sent upstream as `Authorization: Bearer` (and `x-api-key` for Anthropic passthrough); never logged or stored. */
  apiKey?: string | null;
}

/** The configured backend, parsed. */
export interface ConfiguredBackend {
  endpoint: BackendEndpoint;
  apiKey: string | null;
}

/** Where one call goes and what it overrides. */
export interface ResolvedTarget {
  /** The backend's base URL; upstream URLs are `endpoint.url(route)`. */
  endpoint: BackendEndpoint;
  /** The configured key only for the configured backend's origin; else the LLM resource's own key, or none. */
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
  backend: ConfiguredBackend | null;
  /**
   * Origins an LLM resource may name besides the configured backend's; `null` follows any http(s) origin (no backend
   * is configured and none was allowed, so no gateway key exists to leak).
   */
  allowedOrigins: ReadonlySet<string> | null;
  /** Configured model override. */
  model: string | null;
  /** Name of the LLM resource to route by; default `main_llm`, else the first LLM resource. */
  llmResourceName: string | null;
  /** How long rollouts and resources are cached, in milliseconds (0 = no cache). */
  cacheTtlMs: number;
  /** Milliseconds clock. */
  nowMs: () => number;
  /** The gateway's own URL, so a resource pointing back at the gateway is not followed. */
  self: () => BackendEndpoint | null;
  /** Routes LLM resources that Tinker serves (`--tinker`); default: refuse `tinker://` models. */
  tinker?: TinkerRoute;
}

interface Cached<T> {
  value: T;
  expires: number;
}

/**
 * Picks the backend of each call (DESIGN.md Contract 4): the LLM resource of the rollout's `resourcesId`, the latest
 * resources when the rollout has none, else the configured backend. Caches rollouts and resources for a short time.
 */
export class BackendResolver {
  readonly #o: BackendResolverOptions;
  #rollouts = new Map<string, Cached<Rollout>>();
  #resources = new Map<string, Cached<ResourcesUpdate | null>>();
  /** Attempts seen in the store that are not their rollout's latest, by `rolloutId\0attemptId`. */
  #attempts = new Map<string, number>();
  /** LLM resource endpoints, parsed once each (a handful in practice; capped anyway). */
  #endpoints = new Map<string, BackendEndpoint | string>();

  constructor(options: BackendResolverOptions) {
    this.#o = options;
  }

  /** Resolves a rollout-scoped call; throws `NotFoundError` for an unknown rollout or attempt. */
  async resolveScoped(rolloutId: string, attemptId: string, pathMode: RolloutMode): Promise<ResolvedScope> {
    const rollout = await this.#rollout(rolloutId);
    await this.#checkAttempt(rollout, attemptId);
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
    this.#attempts.clear();
  }

  async #rollout(rolloutId: string): Promise<Rollout> {
    const now = this.#o.nowMs();
    const hit = this.#rollouts.get(rolloutId);
    if (hit && hit.expires > now) return hit.value;
    const rollout = await this.#o.store.getRolloutById(rolloutId);
    if (!rollout) {
      throw new NotFoundError(
        'rollout',
        rolloutId,
        `Rollout "${rolloutId}" is not in the store. Use the base URL the runner gave this attempt, or enqueue/start the rollout first.`,
      );
    }
    if (this.#o.cacheTtlMs > 0) this.#rollouts.set(rolloutId, { value: rollout, expires: now + this.#o.cacheTtlMs });
    return rollout;
  }

  /** The attempt must exist before the backend is called (its span could not be stored otherwise). */
  async #checkAttempt(rollout: Rollout, attemptId: string): Promise<void> {
    if (isAttemptedRollout(rollout) && rollout.attempt.attemptId === attemptId) return;
    const key = `${rollout.rolloutId}\u0000${attemptId}`;
    const now = this.#o.nowMs();
    if ((this.#attempts.get(key) ?? 0) > now) return;
    const attempts = await this.#o.store.queryAttempts({ rolloutId: rollout.rolloutId });
    if (!attempts.items.some((a) => a.attemptId === attemptId)) {
      throw new NotFoundError(
        'attempt',
        attemptId,
        `Attempt "${attemptId}" of rollout "${rollout.rolloutId}" is not in the store. Use the base URL the runner gave this attempt.`,
      );
    }
    if (this.#o.cacheTtlMs <= 0) return;
    if (this.#attempts.size >= 4096) this.#attempts.clear();
    this.#attempts.set(key, now + this.#o.cacheTtlMs);
  }

  async #resourcesFor(resourcesId: string | null): Promise<ResourcesUpdate | null> {
    const key = resourcesId ?? '\u0000latest';
    const now = this.#o.nowMs();
    const hit = this.#resources.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value =
      resourcesId === null
        ? await this.#o.store.getLatestResources()
        : await this.#o.store.getResourcesById(resourcesId);
    if (this.#o.cacheTtlMs > 0) this.#resources.set(key, { value, expires: now + this.#o.cacheTtlMs });
    return value;
  }

  #pickLlm(resources: NamedResources): [string, NamedResources[string]] | null {
    const name = this.#o.llmResourceName;
    if (name !== null) return resources[name] ? [name, resources[name]] : null;
    const main = resources.main_llm;
    if (main && main.resourceType !== 'prompt_template') return ['main_llm', main];
    const entries = Object.entries(resources);
    return (
      entries.find(([, r]) => r.resourceType === 'llm') ??
      entries.find(([, r]) => r.resourceType === 'proxy_llm') ??
      null
    );
  }

  #target(update: ResourcesUpdate | null): ResolvedTarget {
    const configured = this.#o.backend;
    const picked = update ? this.#pickLlm(update.resources) : null;
    let endpoint = configured?.endpoint ?? null;
    let apiKey = configured?.apiKey ?? null;
    let model = this.#o.model;
    let sampling: Record<string, unknown> = {};
    if (picked && picked[1].resourceType !== 'prompt_template') {
      const [name, llm] = picked;
      model = llm.model;
      sampling = llm.samplingParameters;
      const viaTinker =
        llm.resourceType === 'llm' ? (this.#o.tinker ?? noTinkerRoute)(llm.endpoint, llm.model, name) : null;
      if (viaTinker !== null) {
        endpoint = viaTinker;
        apiKey = configured !== null && viaTinker.origin === configured.endpoint.origin ? configured.apiKey : null;
      } else if (llm.resourceType === 'llm') {
        const named = this.#endpoint(llm.endpoint, name);
        const self = this.#o.self();
        if (self === null || !named.isSelf(self)) {
          this.#checkAllowed(named, name);
          apiKey =
            llm.apiKey ??
            (configured !== null && named.origin === configured.endpoint.origin ? configured.apiKey : null);
          endpoint = named;
        }
      }
    }
    if (endpoint === null) {
      throw new UserError(
        'The gateway has no backend for this call: no --backend was configured and the resources name no "llm" endpoint. ' +
          'Start the gateway with --backend http://host:port/v1, or publish an LLM resource with an endpoint.',
      );
    }
    return { endpoint, apiKey, model, sampling, resourcesId: update?.resourcesId ?? null };
  }

  /** The parsed endpoint of an LLM resource; a malformed one is a 400 naming the resource. */
  #endpoint(text: string, name: string): BackendEndpoint {
    let endpoint = this.#endpoints.get(text);
    if (endpoint === undefined) {
      endpoint = BackendEndpoint.parse(text);
      if (this.#endpoints.size >= 256) this.#endpoints.clear();
      this.#endpoints.set(text, endpoint);
    }
    if (typeof endpoint === 'string') {
      throw new RequestRefusedError(
        400,
        'invalid_backend_endpoint',
        `The LLM resource "${name}" names the endpoint ${JSON.stringify(text)}, which ${endpoint}. Publish an http(s) base URL such as http://127.0.0.1:8000/v1.`,
      );
    }
    return endpoint;
  }

  /** The configured backend's origin and `allowedOrigins` pass; anything else is a 403 naming the origin and the flag. */
  #checkAllowed(endpoint: BackendEndpoint, name: string): void {
    const { backend, allowedOrigins } = this.#o;
    if (allowedOrigins === null || allowedOrigins.has(endpoint.origin) || backend?.endpoint.origin === endpoint.origin)
      return;
    throw new RequestRefusedError(
      403,
      'backend_not_allowed',
      `The LLM resource "${name}" names the backend origin ${endpoint.origin}, which this gateway does not call` +
        `${backend ? ` (its backend is ${backend.endpoint.origin})` : ''}. Start the gateway with --allow-backend ${endpoint.origin} (startGateway allowBackends) to allow it.`,
    );
  }
}
