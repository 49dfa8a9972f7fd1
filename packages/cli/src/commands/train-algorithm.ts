import { APO, type ApoEvent, type ApoOptions } from '@agl/apo';
import { UserError } from '@agl/core/errors';
import type { Release } from '@agl/core/schema';
import type { Algorithm } from '@agl/trainer';
import type { CliIo } from './output';

/** Names `agl train --algorithm` accepts. */
export const TRAIN_ALGORITHMS = ['baseline', 'apo', 'apo-reflective', 'grpo', 'rloo', 'rejection-sampling'] as const;

/** Default file the best APO prompt is saved to (plus `.json` with scores and lineage). */
export const DEFAULT_APO_OUTPUT = '.agl/apo/best-prompt.txt';

function describeEvent(e: ApoEvent): string | null {
  switch (e.type) {
    case 'seed':
      return `apo: seed v0 scored ${e.score === null ? 'n/a' : e.score.toFixed(3)} on val`;
    case 'selection':
      return `apo: round ${e.round} kept ${e.kept.map((k) => `${k.version}=${k.score.toFixed(2)}`).join(' ')}; dropped ${e.rejected.map((k) => `${k.version}=${k.score.toFixed(2)}`).join(' ') || '-'}`;
    case 'round':
      return `apo: round ${e.round} leader ${e.leader} ${e.leaderScore.toFixed(3)}; best ${e.bestVersion} ${e.bestScore.toFixed(3)}`;
    case 'budget-exhausted':
      return `apo: ${e.message}`;
    default:
      return null;
  }
}

/**
 * The algorithm for `agl train`: the entry's `algorithm` export unless `--algorithm` names one. `apo` builds
 * {@link APO} from the entry's `apo` export (ApoOptions) and prints its progress to stderr.
 */
export function resolveTrainAlgorithm(o: {
  name?: string;
  module: Record<string, unknown>;
  io: CliIo;
}): Algorithm | undefined {
  if (o.name === undefined) return o.module.algorithm as Algorithm | undefined;
  if (o.name === 'baseline') return undefined;
  if (o.name === 'apo' || o.name === 'apo-reflective') {
    const config = (o.module.apo ?? {}) as ApoOptions;
    if (typeof config !== 'object' || config === null)
      throw new UserError('The entry module export `apo` must be an object of APO options.');
    return new APO({
      ...config,
      apoStrategy: o.name === 'apo-reflective' ? 'reflective' : (config.apoStrategy ?? 'beam'),
      outputPath: config.outputPath ?? DEFAULT_APO_OUTPUT,
      onEvent: (e) => {
        const line = describeEvent(e);
        if (line) o.io.err(line);
        config.onEvent?.(e);
      },
    });
  }
  throw new UserError(`Unknown --algorithm ${JSON.stringify(o.name)}; use one of ${TRAIN_ALGORITHMS.join(', ')}.`);
}

/** After `fit`: print APO's best prompt and where it was published (the latest, or a release's candidate). */
export function reportTrainAlgorithm(
  algorithm: Algorithm | undefined,
  io: CliIo,
  release: Release | null = null,
): void {
  if (!(algorithm instanceof APO) || !algorithm.result) return;
  const r = algorithm.result;
  const where = release
    ? `published as ${r.publishedResourcesId}, the candidate of release ${release.releaseId} against ${release.baseline} (${release.share * 100}% of requests first; agl release status)`
    : `published as the latest resources version ${r.publishedResourcesId}`;
  io.out(
    `best prompt ${r.bestVersion} (val ${r.bestScore.toFixed(3)}, seed ${r.seedScore === null ? 'n/a' : r.seedScore.toFixed(3)}; candidate ${r.bestResourcesId}), ${where}:`,
  );
  io.out(r.bestPrompt);
}
