import type { NamedResourcesInput, ResourcesUpdate } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** Where the tuned model goes in the resources. */
export interface TunedModelTarget {
  /** LLM resource to point at the tuned model; default: the first `llm`/`proxy_llm` of the latest version, else `main_llm`. */
  llmResourceName?: string;
  /** Endpoint for a new LLM resource (the provider's base URL); an existing resource keeps its own endpoint. */
  endpoint: string;
  /**
   * Point an existing LLM resource at `endpoint` too, dropping its `apiKey` (a Tinker sampler path is served by the
   * Tinker base URL, and the old endpoint's key must not travel there).
   */
  replaceEndpoint?: boolean;
}

/**
 * The latest resources with one LLM resource naming `model` (the rest, e.g. the prompt, unchanged), and whether the
 * latest version already names it (a restart after publishing).
 */
export async function tunedResources(
  store: Pick<LightningStore, 'getLatestResources'>,
  model: string,
  target: TunedModelTarget,
): Promise<{ resources: NamedResourcesInput; alreadyLatest: ResourcesUpdate | null }> {
  const latest = await store.getLatestResources();
  const resources: NamedResourcesInput = { ...(latest?.resources ?? {}) };
  const name =
    target.llmResourceName ??
    Object.keys(resources).find((k) => resources[k]?.resourceType !== 'prompt_template') ??
    'main_llm';
  const previous = resources[name];
  if (
    previous &&
    previous.resourceType !== 'prompt_template' &&
    previous.model === model &&
    (!target.replaceEndpoint || previous.endpoint === target.endpoint)
  )
    return { resources, alreadyLatest: latest };
  resources[name] =
    previous && previous.resourceType !== 'prompt_template'
      ? target.replaceEndpoint
        ? { ...previous, model, endpoint: target.endpoint, apiKey: null }
        : { ...previous, model }
      : { resourceType: 'llm', endpoint: target.endpoint, model };
  return { resources, alreadyLatest: null };
}

/** Publishes the tuned model as exactly one new resources version (none when the latest already names it). */
export async function publishTunedModel(
  store: Pick<LightningStore, 'getLatestResources' | 'addResources'>,
  model: string,
  target: TunedModelTarget,
): Promise<ResourcesUpdate> {
  const { resources, alreadyLatest } = await tunedResources(store, model, target);
  return alreadyLatest ?? store.addResources(resources);
}

/**
 * A finished job's last step: the resources naming the tuned `model`, published as one new version unless
 * `publish` is false (a release candidate is published by the release instead).
 */
export async function finishTunedModel(
  store: Pick<LightningStore, 'getLatestResources' | 'addResources'>,
  model: string,
  target: TunedModelTarget,
  options: { publish?: boolean; progress: (line: string) => void },
): Promise<{ resources: NamedResourcesInput; published: ResourcesUpdate | null }> {
  if (options.publish === false)
    return { resources: (await tunedResources(store, model, target)).resources, published: null };
  const published = await publishTunedModel(store, model, target);
  options.progress(`published resources ${published.resourcesId} naming ${model}`);
  return { resources: published.resources, published };
}
