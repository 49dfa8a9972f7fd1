import { taskIdOf } from '@agl/core/transitions';
import type { Candidate } from './candidate';
import { complementaryPair, paretoFront, type ScoredCandidate } from './pareto';
import { batchIterator } from './seeded-random';
import type { SearchState } from './search-state';

/**
 * GEPA-style reflective search: per round, `beamWidth × branchFactor` proposals, each from a parent drawn from the
 * Pareto set over val tasks (weighted by the tasks it wins); the parent runs a train minibatch, every failed task gets
 * its own reflection, the edit model folds the reflections in, and the child is kept only when it beats the parent on
 * the same minibatch. Kept children are scored on the full val set. Every `mergeEvery` rounds, the two most
 * complementary Pareto candidates are merged.
 */
export async function reflectiveSearch(s: SearchState): Promise<void> {
  const o = s.options;
  const trainBatches = batchIterator(s.train, o.gradientBatchSize, s.random);
  const taskIds = s.val.map((task) => taskIdOf({ input: task }));
  const seed = s.best;
  const seedEv = await s.evaluate(seed, s.val, 'val', 'seed/full');
  s.seedScore = seedEv.score;
  s.offerBest(seed, seedEv.score);
  s.emit({ type: 'seed', version: seed.version, score: seedEv.score });
  const pool: ScoredCandidate<Candidate>[] = [{ candidate: seed, perTask: seedEv.perTask, score: seedEv.score }];
  const editFile = o.applyEditPromptFiles[0] as string;

  for (let round = 1; round <= o.beamRounds && !s.stopped; round += 1) {
    const front = paretoFront(pool, taskIds);
    const weights = front.flatMap((f) => Array.from({ length: f.wins }, () => f.entry));
    const plans = Array.from({ length: o.beamWidth * o.branchFactor }, (_, j) => ({
      parent: s.random.pick(weights).candidate,
      batch: trainBatches.next().value,
      version: s.nextVersion(),
      key: `r${round}/reflect/${j}`,
    }));
    const accepted = await Promise.all(
      plans.map(async (plan) => {
        const parentEv = await s.evaluate(plan.parent, plan.batch, 'train', `${plan.key}/parent`);
        const child = await s.makeCandidate({
          version: plan.version,
          parent: plan.parent.version,
          round,
          origin: 'edit',
          produce: async () => {
            const failures = parentEv.experiments.filter((e) => (e.finalReward ?? 0) < 1).slice(0, o.gradientBatchSize);
            if (failures.length === 0) return null;
            const reflections = await s.gradient.reflect({ template: plan.parent.template, failures });
            return s.gradient.applyEdit({
              template: plan.parent.template,
              critique: reflections.join('\n'),
              promptFile: editFile,
            });
          },
        });
        if (!child) return null;
        const childEv = await s.evaluate(child, plan.batch, 'train', `${plan.key}/child`);
        if (childEv.score <= parentEv.score) {
          s.rejectedWorseChildren.push({
            version: child.version,
            parent: plan.parent.version,
            round,
            score: childEv.score,
            parentScore: parentEv.score,
          });
          return null;
        }
        const full = await s.evaluate(child, s.val, 'val', `${plan.key}/full`);
        return { candidate: child, perTask: full.perTask, score: full.score };
      }),
    );
    for (const entry of accepted) {
      if (!entry) continue;
      pool.push(entry);
      s.offerBest(entry.candidate, entry.score);
    }
    if (o.mergeEvery > 0 && round % o.mergeEvery === 0 && !s.stopped) {
      const pair = complementaryPair(
        paretoFront(pool, taskIds).map((f) => f.entry),
        taskIds,
      );
      if (pair) {
        const [a, b] = pair;
        const merged = await s.makeCandidate({
          version: s.nextVersion(),
          parent: a.candidate.version,
          mergedWith: b.candidate.version,
          round,
          origin: 'merge',
          produce: () => s.gradient.merge({ a: a.candidate.template, b: b.candidate.template }),
        });
        if (merged) {
          const full = await s.evaluate(merged, s.val, 'val', `r${round}/merge/full`);
          pool.push({ candidate: merged, perTask: full.perTask, score: full.score });
          s.offerBest(merged, full.score);
        }
      }
    }
    s.roundsCompleted = round;
    s.emit({
      type: 'round',
      round,
      leader: s.best.version,
      leaderScore: s.bestScore,
      bestVersion: s.best.version,
      bestScore: s.bestScore,
    });
  }
}
