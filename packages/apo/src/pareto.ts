/** A candidate's per-task scores on the full val set. */
export interface ScoredCandidate<C> {
  candidate: C;
  perTask: Map<string, number>;
  score: number;
}

/**
 * The Pareto set over tasks: candidates that reach the best score on at least one task, each with the number of
 * tasks it is best on (its sampling weight). Ties count for every tied candidate. Input order is kept.
 */
export function paretoFront<C>(
  pool: readonly ScoredCandidate<C>[],
  taskIds: readonly string[],
): { entry: ScoredCandidate<C>; wins: number }[] {
  const wins = new Map<ScoredCandidate<C>, number>();
  for (const task of taskIds) {
    const best = Math.max(...pool.map((p) => p.perTask.get(task) ?? 0));
    for (const p of pool) if ((p.perTask.get(task) ?? 0) === best) wins.set(p, (wins.get(p) ?? 0) + 1);
  }
  return pool.filter((p) => (wins.get(p) ?? 0) > 0).map((entry) => ({ entry, wins: wins.get(entry) ?? 0 }));
}

/**
 * The most complementary pair: maximises min(tasks where A beats B, tasks where B beats A); null when no pair has
 * wins on both sides.
 */
export function complementaryPair<C>(
  front: readonly ScoredCandidate<C>[],
  taskIds: readonly string[],
): [ScoredCandidate<C>, ScoredCandidate<C>] | null {
  let best: [ScoredCandidate<C>, ScoredCandidate<C>] | null = null;
  let bestValue = 0;
  for (let i = 0; i < front.length; i += 1) {
    for (let j = i + 1; j < front.length; j += 1) {
      const a = front[i] as ScoredCandidate<C>;
      const b = front[j] as ScoredCandidate<C>;
      let aWins = 0;
      let bWins = 0;
      for (const t of taskIds) {
        const d = (a.perTask.get(t) ?? 0) - (b.perTask.get(t) ?? 0);
        if (d > 0) aWins += 1;
        else if (d < 0) bWins += 1;
      }
      const value = Math.min(aWins, bWins);
      if (value > bestValue) {
        bestValue = value;
        best = [a, b];
      }
    }
  }
  return best;
}
