import { APO } from '@agl/apo';
import { UserError } from '@agl/core/errors';
import type { Release, ResourcesUpdate } from '@agl/core/schema';
import type { Algorithm } from '@agl/trainer';
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
 * `agl train --release`, after training: `latest` (from {@link latestBeforeTraining}) is the latest again (APO publishes
 * its winner as the latest; the release decides whether it becomes so), and APO's winner is the candidate of a release
 * against `--baseline`, default `latest`.
 */
export async function releaseTrainedWinner(
  target: TrainStoreTarget,
  algorithm: Algorithm | undefined,
  latest: ResourcesUpdate,
  flags: ReleaseFlags,
): Promise<Release> {
  if (!(algorithm instanceof APO) || !algorithm.result)
    throw new UserError(
      '--release releases the winner of --algorithm apo or apo-reflective; this run trained no prompt to release.',
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
