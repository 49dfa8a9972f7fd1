/** Options of `StoreClient.getRolloutSpans`. */
export interface RolloutSpansOptions {
  /** One attempt's spans only; `'latest'` is the rollout's latest attempt. Default: every attempt's. */
  attemptId?: string;
  /** At most this many spans (default: all). */
  limit?: number;
  offset?: number;
  /** By sequence id; default `asc`. */
  sortOrder?: 'asc' | 'desc';
}

/** The path and query of `GET {prefix}/rollouts/{id}/spans` for `options`. */
export function rolloutSpansPath(prefix: string, rolloutId: string, options: RolloutSpansOptions): string {
  const query = new URLSearchParams({
    limit: String(options.limit === 0 ? 1 : (options.limit ?? -1)),
    offset: String(options.offset ?? 0),
    sort_order: options.sortOrder ?? 'asc',
  });
  if (options.attemptId !== undefined) query.set('attempt_id', options.attemptId);
  return `${prefix}/rollouts/${encodeURIComponent(rolloutId)}/spans?${query.toString()}`;
}
