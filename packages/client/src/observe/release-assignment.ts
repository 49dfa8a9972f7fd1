import { createHash } from 'node:crypto';
import {
  RELEASE_METADATA,
  releaseArmFor,
  type JsonObject,
  type NamedResources,
  type ReleaseArm,
  type ResourcesUpdate,
} from '@agl/core/schema';
import type { LightningStore, ServingResources } from '@agl/core/store';

/** The resources that serve one request, decided once and handed both to the agent and to the record. */
export interface ServedResources {
  resources: NamedResources | undefined;
  /** The resources id, `undefined` when none is known (the app's defaults serve the request). */
  resourcesId: string | undefined;
  /** The version of that id. */
  resourcesVersion: number | undefined;
  /** The release this request belongs to and its arm, while a release runs. */
  release: { releaseId: string; arm: ReleaseArm } | undefined;
}

/** A unit key's stable position in [0, 1) for a release: the first 48 bits of SHA-256(release id, key). */
export function unitPosition(releaseId: string, unitKey: string): number {
  const digest = createHash('sha256').update(releaseId).update('\u0000').update(unitKey).digest();
  return digest.readUIntBE(0, 6) / 2 ** 48;
}

const fromUpdate = (update: ResourcesUpdate | null | undefined) => ({
  resources: update?.resources,
  resourcesId: update?.resourcesId,
  resourcesVersion: update?.version,
});

/**
 * Decides what serves a request: while a release runs, the baseline or the candidate by the unit key's position
 * against the current share (so a key keeps its arm, also while the share grows); otherwise the latest resources;
 * with nothing known (the store never answered), nothing (the defaults, recorded with no id).
 */
export function servedResources(serving: ServingResources | undefined, unitKey: string): ServedResources {
  const release = serving?.release;
  if (!release) return { ...fromUpdate(serving?.latest), release: undefined };
  const arm = releaseArmFor(unitPosition(release.releaseId, unitKey), release.share);
  return { ...fromUpdate(release[arm]), release: { releaseId: release.releaseId, arm } };
}

/** The rollout metadata that records the served version and the release arm. */
export function servedMetadata(served: ServedResources): JsonObject {
  const metadata: JsonObject = {};
  if (served.resourcesVersion !== undefined) metadata[RELEASE_METADATA.resourcesVersion] = served.resourcesVersion;
  if (served.release) {
    metadata[RELEASE_METADATA.releaseId] = served.release.releaseId;
    metadata[RELEASE_METADATA.arm] = served.release.arm;
  }
  return metadata;
}

/** Reads what serves requests: both arms while a release runs (one request), else the latest resources. */
export async function loadServing(store: LightningStore): Promise<ServingResources> {
  if (store.getServingResources) return store.getServingResources();
  return { latest: await store.getLatestResources(), release: null };
}
