import { z } from 'zod';
import { JsonObject } from './json';

/** An LLM endpoint that the agent should call. */
export const LlmResource = z.object({
  /** Discriminator. */
  resourceType: z.literal('llm'),
  /** Base URL, e.g. `http://127.0.0.1:8000/v1`. */
  endpoint: z.string().min(1),
  /** Model name to request. */
  model: z.string().min(1),
  /** API key, if the endpoint needs one. Never shown by the dashboard. */
  apiKey: z.string().nullable().default(null),
  /** Sampling parameters to pass along (temperature, top_p, ...). */
  samplingParameters: JsonObject.default({}),
});
/** @see {@link LlmResource} */
export type LlmResource = z.infer<typeof LlmResource>;

/** An LLM endpoint behind the AGL gateway; the runner scopes its URL to the rollout and attempt. */
export const ProxyLlmResource = LlmResource.extend({
  /** Discriminator. */
  resourceType: z.literal('proxy_llm'),
});
/** @see {@link ProxyLlmResource} */
export type ProxyLlmResource = z.infer<typeof ProxyLlmResource>;

/** A prompt template that APO optimises. */
export const PromptTemplateResource = z.object({
  /** Discriminator. */
  resourceType: z.literal('prompt_template'),
  /** The template text. */
  template: z.string(),
  /** Template engine; only `f-string` is formatted by AGL itself. */
  engine: z.enum(['jinja', 'f-string', 'poml']).default('f-string'),
});
/** @see {@link PromptTemplateResource} */
export type PromptTemplateResource = z.infer<typeof PromptTemplateResource>;

/** Any of AGL's three resource kinds. */
export const Resource = z.discriminatedUnion('resourceType', [LlmResource, ProxyLlmResource, PromptTemplateResource]);
/** @see {@link Resource} */
export type Resource = z.infer<typeof Resource>;

/** Resources by name, e.g. `{ main_llm: ..., system_prompt: ... }`. */
export const NamedResources = z.record(z.string(), Resource);
/** @see {@link NamedResources} */
export type NamedResources = z.infer<typeof NamedResources>;
/** What callers may pass (defaults filled in). */
export type NamedResourcesInput = z.input<typeof NamedResources>;

/** One versioned set of resources. */
export const ResourcesUpdate = z.object({
  /** `rs-` id from `addResources`, or a caller-chosen id from `updateResources`. */
  resourcesId: z.string().min(1),
  /** First creation, seconds since the epoch. */
  createTime: z.number(),
  /** Last update, seconds since the epoch; the latest resources have the greatest value. */
  updateTime: z.number(),
  /** 1 on creation, +1 per update of the same id. */
  version: z.number().int().min(1),
  /** The resources. */
  resources: NamedResources,
});
/** @see {@link ResourcesUpdate} */
export type ResourcesUpdate = z.infer<typeof ResourcesUpdate>;

/**
 * The concrete base URL of a proxy LLM for one attempt: `http://h:1/v1` → `http://h:1/rollout/R/attempt/A/v1`.
 */
export function proxyLlmBaseUrl(endpoint: string, rolloutId: string, attemptId: string): string {
  let base = endpoint.endsWith('/') ? endpoint.slice(0, -1) : endpoint;
  const hadV1 = base.endsWith('/v1');
  if (hadV1) base = base.slice(0, -3);
  return `${base}/rollout/${rolloutId}/attempt/${attemptId}${hadV1 ? '/v1' : ''}`;
}

/** Formats an f-string template: `{name}` placeholders, `{{` and `}}` escapes. Unknown names are left as-is. */
export function formatPromptTemplate(template: string, values: Record<string, unknown>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    return name !== undefined && name in values ? String(values[name]) : match;
  });
}
