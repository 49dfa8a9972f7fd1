import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UserError } from '@agl/core/errors';
import { releaseSettingProblem, releaseToWire, type NamedResourcesInput, type Release } from '@agl/core/schema';
import type { LightningStore, ReleaseStore, StartReleaseRequest } from '@agl/core/store';
import { rubricHash } from '@agl/apo';
import { list } from './flag-values';
import type { CliIo } from './output';

/** The release settings flags (`agl release start`, `agl resources publish --release`). */
export interface ReleaseFlags {
  baseline?: string;
  shares?: string;
  metric?: string;
  guard?: string[];
  minRequests?: string;
  maxDuration?: string;
}

/** Adds `--baseline`, `--shares`, `--metric`, `--guard` (repeatable), `--min-requests` and `--max-duration`. */
export function withReleaseFlags(cmd: Command): Command {
  return cmd
    .option('--baseline <resourcesId>', 'the version the candidate is compared with (default: the latest)')
    .option('--shares <list>', "the candidate's traffic shares, increasing, ending at 1 (default 0.01,0.1,0.5,1)")
    .option('--metric <metric>', "feedback (default), judge:<rubric file or hash>, or the name of the agent's reward")
    .option(
      '--guard <guard>',
      'a guard, repeatable: failure-rate:+0.02, latency-p95:+20%, tokens:+10% (default the first two)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--min-requests <n>', 'candidate requests each share needs before a ramp (default 100)')
    .option('--max-duration <duration>', 'roll back a release still running after this long: 3600, 90m, 6h, 2d');
}

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--max-duration` in seconds (`3600`, `90m`, `6h`, `2d`); a UserError names the flag. */
export function durationSeconds(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([smhd]?)$/.exec(text.trim());
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2] || 's']! : Number.NaN;
  if (!(seconds > 0)) throw new UserError(`--max-duration got ${JSON.stringify(text)}; pass seconds or 90m, 6h, 2d.`);
  return seconds;
}

/** `judge:<file>` becomes `judge:<the rubric's hash>` (what the judge records); anything else stays. */
function metricValue(metric: string): string {
  if (!metric.startsWith('judge:')) return metric;
  const rubric = metric.slice('judge:'.length);
  if (rubric !== '' && existsSync(rubric)) return `judge:${rubricHash(readFileSync(rubric, 'utf8'))}`;
  return metric;
}

/** The flags as a {@link StartReleaseRequest} (without the candidate); a UserError names a bad flag. */
export function releaseRequest(flags: ReleaseFlags): StartReleaseRequest {
  const request: StartReleaseRequest = {};
  if (flags.baseline !== undefined) request.baseline = flags.baseline;
  if (flags.shares !== undefined) {
    request.shares = (list(flags.shares) ?? []).map(Number);
    if (releaseSettingProblem({ shares: request.shares }))
      throw new UserError(
        `--shares got ${JSON.stringify(flags.shares)}; pass increasing shares in (0, 1] ending at 1, e.g. 0.01,0.1,0.5,1.`,
      );
  }
  if (flags.metric !== undefined) request.metric = metricValue(flags.metric);
  if (flags.guard !== undefined) request.guards = flags.guard;
  for (const guard of flags.guard ?? []) {
    const problem = releaseSettingProblem({ guards: [guard] });
    if (problem) throw new UserError(`--guard: ${problem.message}.`);
  }
  if (flags.minRequests !== undefined) {
    const n = Number(flags.minRequests);
    if (!Number.isInteger(n) || n < 1)
      throw new UserError(`--min-requests got ${JSON.stringify(flags.minRequests)}; pass a whole number ≥ 1.`);
    request.minRequests = n;
  }
  if (flags.maxDuration !== undefined) request.maxDurationSeconds = durationSeconds(flags.maxDuration);
  return request;
}

/** The store's release methods, or a UserError saying the store has none. */
export function releaseStore(store: LightningStore): ReleaseStore {
  if (!store.startRelease)
    throw new UserError('This store has no releases; upgrade the store server (agl store serve) to this AGL version.');
  return store as LightningStore & ReleaseStore;
}

/** Starts a release whose candidate is `resources`, published now without becoming the latest. */
export function startCandidateRelease(
  store: LightningStore,
  resources: NamedResourcesInput,
  flags: ReleaseFlags,
  candidateId?: string,
) {
  return releaseStore(store).startRelease({
    ...releaseRequest(flags),
    candidateResources: resources,
    ...(candidateId !== undefined ? { candidateId } : {}),
  });
}

/** True when any release setting flag was given (they go with `--release`). */
export function hasReleaseFlags(flags: ReleaseFlags): boolean {
  return [flags.baseline, flags.shares, flags.metric, flags.guard, flags.minRequests, flags.maxDuration].some(
    (v) => v !== undefined,
  );
}

/** A UserError when release setting flags come without `--release` (`extra` names the command's own such flags). */
export function requireReleaseFlag(flags: ReleaseFlags & { release?: boolean }, extra: string[] = []): void {
  if (flags.release || !hasReleaseFlags(flags)) return;
  throw new UserError(
    `${[...extra, '--shares', '--metric', '--guard', '--min-requests', '--max-duration', '--baseline'].join(', ')} go with --release.`,
  );
}

/** Prints a release just started for a candidate: its id (or, with `json`, the release) on stdout, what it does on stderr. */
export function printCandidateRelease(io: CliIo, release: Release, json = false): void {
  if (json) return io.out(JSON.stringify(releaseToWire(release), null, 2));
  io.out(release.releaseId);
  io.err(
    `published ${release.candidate} as the candidate of release ${release.releaseId} (${release.share * 100}% of ` +
      `requests next to ${release.baseline}, which stays the latest); watch it with agl release status`,
  );
}
