import { UserError } from '@agl/core/errors';
import type { Candidate } from './candidate';
import { batchIterator } from './seeded-random';
import type { SearchState } from './search-state';

/**
 * AGL 0.3 APO beam search: per round, expand `beamWidth` parents × `branchFactor` branches (evaluate the parent on a
 * train batch, critique, edit), score beam + children on one val batch, keep the top `beamWidth`, and re-score the
 * leader on the full val set.
 */
export async function beamSearch(s: SearchState): Promise<void> {
  const o = s.options;
  const trainBatches = batchIterator(s.train, o.gradientBatchSize, s.random);
  const valBatches = batchIterator(s.val, o.valBatchSize, s.random);
  const seed = s.best;
  if (o.runInitialValidation) {
    const ev = await s.evaluate(seed, s.val, 'val', 'seed/full');
    s.seedScore = ev.score;
    s.offerBest(seed, ev.score);
    s.emit({ type: 'seed', version: seed.version, score: ev.score });
  } else {
    s.emit({ type: 'seed', version: seed.version, score: null });
  }
  let beam: Candidate[] = [seed];
  for (let round = 1; round <= o.beamRounds && !s.stopped; round += 1) {
    const parents =
      beam.length < o.beamWidth
        ? Array.from({ length: o.beamWidth }, (_, i) => beam[i % beam.length] as Candidate)
        : s.random.sample(beam, o.beamWidth);
    const plans = parents.flatMap((parent, p) =>
      Array.from({ length: o.branchFactor }, (_, b) => ({
        parent,
        key: `r${round}/grad/${p}.${b}`,
        batch: trainBatches.next().value,
        critiqueFile: s.random.pick(o.gradientPromptFiles),
        editFile: s.random.pick(o.applyEditPromptFiles),
        sampler: s.random.fork(),
        version: s.nextVersion(),
      })),
    );
    const made = await Promise.all(
      plans.map((plan) =>
        s.makeCandidate({
          version: plan.version,
          parent: plan.parent.version,
          round,
          origin: 'edit',
          produce: async () => {
            const ev = await s.evaluate(plan.parent, plan.batch, 'train', plan.key);
            const critique = await s.gradient.critique({
              template: plan.parent.template,
              experiments: ev.experiments,
              promptFile: plan.critiqueFile,
              random: plan.sampler,
            });
            return s.gradient.applyEdit({ template: plan.parent.template, critique, promptFile: plan.editFile });
          },
        }),
      ),
    );
    const children = made.filter((c): c is Candidate => c !== null);
    const valBatch = valBatches.next().value;
    const pool = [...beam, ...children];
    const evs = await Promise.all(pool.map((c) => s.evaluate(c, valBatch, 'val', `r${round}/select/${c.version}`)));
    const ranked = pool.map((c, i) => ({ c, i, score: evs[i]!.score })).sort((a, b) => b.score - a.score || a.i - b.i);
    if (ranked.length === 0)
      throw new UserError(`APO round ${round}: no candidate to select from; check that the agent produces rewards.`);
    const kept = ranked.slice(0, o.beamWidth);
    const rejected = ranked.slice(o.beamWidth);
    const scoreOf = new Map(ranked.map((x) => [x.c.version, x.score]));
    for (const x of rejected) {
      const parentScore = x.c.parent === null ? undefined : scoreOf.get(x.c.parent);
      if (x.c.round === round && parentScore !== undefined && x.score < parentScore) {
        s.rejectedWorseChildren.push({
          version: x.c.version,
          parent: x.c.parent as string,
          round,
          score: x.score,
          parentScore,
        });
      }
    }
    beam = kept.map((x) => x.c);
    s.emit({
      type: 'selection',
      round,
      kept: kept.map((x) => ({ version: x.c.version, score: x.score })),
      rejected: rejected.map((x) => ({ version: x.c.version, score: x.score })),
    });
    const leader = beam[0] as Candidate;
    const leaderEv = await s.evaluate(leader, s.val, 'val', `r${round}/leader/${leader.version}`);
    s.offerBest(leader, leaderEv.score);
    s.roundsCompleted = round;
    s.emit({
      type: 'round',
      round,
      leader: leader.version,
      leaderScore: leaderEv.score,
      bestVersion: s.best.version,
      bestScore: s.bestScore,
    });
  }
}
