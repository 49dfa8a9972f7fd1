import type { NamedResourcesInput, Release, ResourcesUpdate } from '../schema/index';

/** What `startRelease` takes (Contract 4c). Unset settings take the defaults of `@agl/core/schema`. */
export interface StartReleaseRequest {
  /** The candidate: a stored resources id ... */
  candidate?: string;
  /**
   * ... or new resources published as the candidate without becoming the latest (`agl resources publish --release`),
   * under `candidateId` when given (it must not be the baseline's id), else a new `rs-` id.
   */
  candidateResources?: NamedResourcesInput;
  candidateId?: string;
  /** The baseline resources id. Default: the latest. */
  baseline?: string;
  /** Share schedule, increasing, ending at 1. Default 0.01, 0.1, 0.5, 1. */
  shares?: number[];
  /** `feedback` (default), `judge:<rubric hash or prefix>`, or the name of the agent's reward. */
  metric?: string;
  /** Guards, e.g. `failure-rate:+0.02`, `latency-p95:+20%`, `tokens:+10%`. Default failure-rate and latency-p95. */
  guards?: string[];
  /** Candidate requests each share needs before a ramp. Default 100. */
  minRequests?: number;
  /** Seconds after which a release still running is rolled back. Default none. */
  maxDurationSeconds?: number | null;
  /** False-positive rate of the sequential test. Default 0.05. */
  alpha?: number;
}

/** What a service needs on each request: the latest resources and, while a release runs, both arms' resources. */
export interface ServingResources {
  latest: ResourcesUpdate | null;
  release: {
    releaseId: string;
    share: number;
    baseline: ResourcesUpdate;
    candidate: ResourcesUpdate;
  } | null;
}

/**
 * Releases (an AGL extension; the memory, SQLite and PostgreSQL stores and `StoreClient` have them). At most one
 * release runs at a time. Errors: an unknown release or resources id is a `NotFoundError`; a bad setting a
 * `ValidationError` naming the field; ending a release that has ended, or starting one while another runs, a
 * `ConflictError`.
 */
export interface ReleaseStore {
  startRelease(request: StartReleaseRequest): Promise<Release>;
  getRelease(releaseId: string): Promise<Release | null>;
  /** Every release, newest first. */
  listReleases(): Promise<Release[]>;
  /** Ends a running release with its candidate as the latest resources (a manual decision, logged). */
  promoteRelease(releaseId: string, options?: { reason?: string }): Promise<Release>;
  /** Ends a running release; every request gets the baseline again (a manual decision, logged). */
  abortRelease(releaseId: string, options?: { reason?: string }): Promise<Release>;
  /**
   * Runs the release's sequential test on its recorded results now (the store also runs it after each batch of
   * production records): ramps, rolls back or promotes, logging the decision. Returns the release after it.
   */
  evaluateRelease(releaseId: string): Promise<Release>;
  /** The latest resources and the running release's arms, read together (what `observe` caches). */
  getServingResources(): Promise<ServingResources>;
}
