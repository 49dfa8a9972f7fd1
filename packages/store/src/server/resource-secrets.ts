import type { FastifyRequest } from 'fastify';
import type { NamedResources, ResourcesUpdate } from '@agl/core/schema';
import { REVEAL_SECRETS_HEADER } from '@agl/client';

export { REVEAL_SECRETS_HEADER };

/** Shown instead of a secret; keeps the last 4 characters so a user can tell keys apart. */
export function maskSecret(value: string): string {
  return value.length <= 8 ? '••••' : `••••${value.slice(-4)}`;
}

/** A copy of `resources` with `apiKey` of every LLM resource masked. */
export function maskSecrets(resources: NamedResources): NamedResources {
  const out: NamedResources = {};
  for (const [name, resource] of Object.entries(resources)) {
    if (resource.resourceType === 'llm' || resource.resourceType === 'proxy_llm') {
      out[name] = { ...resource, apiKey: resource.apiKey === null ? null : maskSecret(resource.apiKey) };
    } else {
      out[name] = resource;
    }
  }
  return out;
}

/** True when the request asks for secrets in clear ({@link REVEAL_SECRETS_HEADER} set to `1`). */
export function revealsSecrets(request: FastifyRequest): boolean {
  return request.headers[REVEAL_SECRETS_HEADER] === '1';
}

/** `update` as the caller may see it: API keys masked unless the request {@link revealsSecrets}. */
export function resourcesForCaller<T extends ResourcesUpdate | null>(request: FastifyRequest, update: T): T {
  if (update === null || revealsSecrets(request)) return update;
  return { ...update, resources: maskSecrets(update.resources) };
}
