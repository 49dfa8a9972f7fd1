import { APO } from '@agl/apo';
import { UserError } from '@agl/core/errors';
import type { NamedResourcesInput, Release, ResourcesUpdate } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { TinkerRl, type Algorithm } from '@agl/trainer';
import { releaseRequest, releaseStore, type ReleaseFlags } from './release-flags';
import { withCliStore } from './store-options';

/** Where `agl train` stores (a SQLite path or a store URL) and its token. */
export interface TrainStoreTarget {
  store?: string;
  token?: string;
}

/**
 * `agl train --release`, before training: the latest resources version, which the trained winner is compared with
 * (unless `--baseline` names another) and which is the latest again after training; a UserError, before anything
 * runs, when there is none or a release flag is bad.
 */
export async function latestBeforeTraining(target: TrainStoreTarget, flags: ReleaseFlags): Promise<ResourcesUpdate> {
  releaseRequest(flags);
  const latest = await withCliStore(target, (store) => store.getLatestResources());
  if (!latest)
    throw new UserError(
      '--release compares the trained winner with the latest resources, and none are published yet; publish the current ones first (agl resources publish <file>) or train without --release.',
    );
  return latest;
}

/**
 * `agl train --release`, after training: `latest` (from {@link latestBeforeTraining}) is the latest again (APO and a
 * Tinker run publish what they trained as the latest; the release decides whether it becomes so), and what the run
 * trained is the candidate of a release against `--baseline`, default `latest`: APO's winner, or (`--backend tinker`)
 * the resources naming the final sampler path (see {@link tinkerCandidate}).
 */
export async function releaseTrainedWinner(
  target: TrainStoreTarget,
  algorithm: Algorithm | undefined,
  latest: ResourcesUpdate,
  flags: ReleaseFlags,
): Promise<Release> {
  if (algorithm instanceof TinkerRl) {
    const trained = algorithm.rounds.at(-1)?.resourcesId;
    if (!trained || !algorithm.summary().samplerPath)
      throw new UserError(
        '--release releases the final sampler weights of the run, and this run trained no round (it had already finished); pass --rounds N for more rounds or --checkpoint-dir DIR to start over.',
      );
    return withCliStore(target, async (store) => {
      const candidateResources = await tinkerCandidate(store, trained, latest);
      await store.updateResources(latest.resourcesId, latest.resources);
      return releaseStore(store).startRelease({
        ...releaseRequest(flags),
        baseline: flags.baseline ?? latest.resourcesId,
        candidateResources,
      });
    });
  }
  if (!(algorithm instanceof APO) || !algorithm.result)
    throw new UserError(
      '--release releases the winner of --algorithm apo or apo-reflective, or the final sampler of --backend tinker; this run trained nothing to release.',
    );
  const winner = algorithm.result.publishedResourcesId;
  return withCliStore(target, async (store) => {
    await store.updateResources(latest.resourcesId, latest.resources);
    return releaseStore(store).startRelease({
      ...releaseRequest(flags),
      baseline: flags.baseline ?? latest.resourcesId,
      candidate: winner,
    });
  });
}

/**
 * A Tinker run's candidate: the resources version its last round published (the LLM resource names the final sampler
 * path), except that an LLM resource the latest-before-training version also has keeps that version's endpoint: the
 * run's own gateway closes when training ends, while the served one (e.g. `agl gateway serve --tinker`) stays up and
 * samples any sampler path named as the model.
 */
export async function tinkerCandidate(
  store: LightningStore,
  trainedResourcesId: string,
  latest: ResourcesUpdate,
): Promise<NamedResourcesInput> {
  const trained = await store.getResourcesById(trainedResourcesId);
  if (!trained) throw new UserError(`The trained resources version ${trainedResourcesId} is not in the store.`);
  const out: Record<string, unknown> = { ...trained.resources };
  for (const [name, resource] of Object.entries(trained.resources)) {
    const before = latest.resources[name] as { resourceType?: string; endpoint?: string } | undefined;
    const isLlm = (r: { resourceType?: string } | undefined) =>
      r?.resourceType === 'llm' || r?.resourceType === 'proxy_llm';
    if (isLlm(resource as { resourceType?: string }) && isLlm(before) && typeof before?.endpoint === 'string')
      out[name] = { ...resource, endpoint: before.endpoint };
  }
  return out as NamedResourcesInput;
}
