import { NotFoundError } from '@agl/core/errors';
import {
  parseWire,
  releaseFromWire,
  ResourcesUpdate,
  toWire,
  type NamedResourcesInput,
  type Release,
} from '@agl/core/schema';
import type { ServingResources, StartReleaseRequest } from '@agl/core/store';
import { REVEAL_SECRETS_HEADER } from './reveal-secrets-header';

const P = '/v1/agl/releases';
const enc = encodeURIComponent;
const REVEAL: Record<string, string> = { [REVEAL_SECRETS_HEADER]: '1' };
const readResources = (value: unknown): ResourcesUpdate =>
  parseWire(ResourcesUpdate, 'resourcesUpdate', value, 'resources');

/** How {@link ReleaseRoutes} calls the server (the `StoreClient`'s own GET and POST). */
export interface ReleaseHttp {
  get(path: string, headers?: Record<string, string>): Promise<unknown>;
  post(path: string, body: unknown): Promise<unknown>;
  /** Whether an error says the server has no such route (an older server). */
  missingRoute(error: unknown): boolean;
}

/** The release routes of the store server (`/v1/agl/releases…`), for `StoreClient`. */
export class ReleaseRoutes {
  readonly #http: ReleaseHttp;

  constructor(http: ReleaseHttp) {
    this.#http = http;
  }

  async start(request: StartReleaseRequest): Promise<Release> {
    const { candidateResources, maxDurationSeconds, minRequests, candidateId, ...rest } = request;
    const body: Record<string, unknown> = { ...rest };
    if (candidateResources !== undefined) body.candidate_resources = namedResourcesToWire(candidateResources);
    if (candidateId !== undefined) body.candidate_id = candidateId;
    if (minRequests !== undefined) body.min_requests = minRequests;
    if (maxDurationSeconds !== undefined) body.max_duration_seconds = maxDurationSeconds;
    return releaseFromWire(await this.#http.post(P, body));
  }

  async get(releaseId: string): Promise<Release | null> {
    try {
      return releaseFromWire(await this.#http.get(`${P}/${enc(releaseId)}`));
    } catch (error) {
      if (NotFoundError.isInstance(error)) return null;
      throw error;
    }
  }

  async list(): Promise<Release[]> {
    const value = (await this.#http.get(P)) as { items?: unknown[] } | null;
    return (value?.items ?? []).map(releaseFromWire);
  }

  async end(releaseId: string, action: 'promote' | 'abort', options: { reason?: string }): Promise<Release> {
    return releaseFromWire(await this.#http.post(`${P}/${enc(releaseId)}/${action}`, { ...options }));
  }

  async evaluate(releaseId: string): Promise<Release> {
    return releaseFromWire(await this.#http.post(`${P}/${enc(releaseId)}/evaluate`, {}));
  }

  /** `GET …/serving`; a server without releases (404) answers with `latest()` alone. */
  async serving(latest: () => Promise<ResourcesUpdate | null>): Promise<ServingResources> {
    type Wire = {
      latest?: unknown;
      release?: { id: string; share: number; baseline: unknown; candidate: unknown } | null;
    };
    let value: Wire;
    try {
      value = (await this.#http.get(`${P}/serving`, REVEAL)) as Wire;
    } catch (error) {
      if (!this.#http.missingRoute(error)) throw error;
      return { latest: await latest(), release: null };
    }
    const release = value.release ?? null;
    return {
      latest: value.latest == null ? null : readResources(value.latest),
      release: release
        ? {
            releaseId: release.id,
            share: release.share,
            baseline: readResources(release.baseline),
            candidate: readResources(release.candidate),
          }
        : null,
    };
  }
}

function namedResourcesToWire(resources: NamedResourcesInput): Record<string, unknown> {
  return Object.fromEntries(Object.entries(resources).map(([name, resource]) => [name, toWire('resource', resource)]));
}
