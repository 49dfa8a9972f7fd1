import type { NamedResources } from '@agl/core/schema';

/** Shown instead of a secret; keeps the last 4 characters so a user can tell keys apart. */
export function maskSecret(value: string): string {
  return value.length <= 8 ? '••••' : `••••${value.slice(-4)}`;
}

/** A copy of `resources` with `apiKey` of every LLM resource masked (the dashboard never shows keys). */
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
