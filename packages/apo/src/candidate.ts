/** One prompt candidate. Its resources id in the store is `${runId}-${version}`. */
export interface Candidate {
  /** `v0` (the seed), `v1`, … in creation order. */
  version: string;
  template: string;
  /** The version it was edited from (null for the seed); a merge names its first parent. */
  parent: string | null;
  /** The second parent of a merge. */
  mergedWith?: string;
  /** The round that created it (0 for the seed). */
  round: number;
  origin: 'seed' | 'edit' | 'merge';
}

/** Scores of one candidate on one evaluation. */
export interface CandidateScore {
  /** The evaluation key, e.g. `r2/select`. */
  key: string;
  score: number;
  /** Rollouts that finished. */
  n: number;
}

/** A candidate as APO's result reports it. */
export interface CandidateReport extends Candidate {
  resourcesId: string;
  scores: CandidateScore[];
}

/** The resources id of a candidate. */
export function candidateResourcesId(runId: string, version: string): string {
  return `${runId}-${version}`;
}
