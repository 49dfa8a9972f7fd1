import { ConflictError, NotFoundError, ValidationError } from '@agl/core/errors';
import {
  DEFAULT_RELEASE_ALPHA,
  DEFAULT_RELEASE_GUARDS,
  DEFAULT_RELEASE_METRIC,
  DEFAULT_RELEASE_MIN_REQUESTS,
  DEFAULT_RELEASE_SHARES,
  newResourcesId,
  releaseSettingProblem,
  type NamedResources,
  type Release,
  type ReleaseDecision,
  type ResourcesUpdate,
} from '@agl/core/schema';
import type { ServingResources, StartReleaseRequest } from '@agl/core/store';
import { randomBytes } from 'node:crypto';
import type { RuleContext } from '../engine/store-rules';
import { call, type Rule } from '../engine/storage-ops';
import type { ReleaseVerdict } from './release-decision';

/** A new release id: `rel-` and 12 hex digits. */
export const newReleaseId = (): string => `rel-${randomBytes(6).toString('hex')}`;

export const releaseNotFound = (id: string): NotFoundError =>
  new NotFoundError(
    'release',
    id,
    `Release ${id} not found. List releases with \`agl release status\` or GET /v1/agl/releases.`,
  );

function* requireRelease(id: string): Rule<Release> {
  const release = yield* call('getRelease', id);
  if (!release) throw releaseNotFound(id);
  return release;
}

function* requireResources(id: string, field: string): Rule<ResourcesUpdate> {
  const resources = yield* call('getResources', id);
  if (!resources)
    throw new NotFoundError(
      'resources',
      id,
      `${field}: resources ${id} not found. Publish them first (agl resources publish).`,
    );
  return resources;
}

/** The running release, if any (at most one runs). */
function* runningRelease(): Rule<Release | null> {
  const all = yield* call('listReleases');
  return all.find((r) => r.state === 'running') ?? null;
}

/** Checks the settings (a `ValidationError` naming the field) and fills the defaults. */
export function releaseSettings(
  req: StartReleaseRequest,
): Pick<Release, 'shares' | 'metric' | 'guards' | 'minRequests' | 'maxDurationSeconds' | 'alpha'> {
  const settings = {
    shares: req.shares ?? [...DEFAULT_RELEASE_SHARES],
    metric: req.metric ?? DEFAULT_RELEASE_METRIC,
    guards: req.guards ?? [...DEFAULT_RELEASE_GUARDS],
    minRequests: req.minRequests ?? DEFAULT_RELEASE_MIN_REQUESTS,
    maxDurationSeconds: req.maxDurationSeconds ?? null,
    alpha: req.alpha ?? DEFAULT_RELEASE_ALPHA,
  };
  const problem = releaseSettingProblem(settings);
  if (problem)
    throw new ValidationError(`${problem.field}: ${problem.message}`, [{ path: problem.field, ...problem }], {
      status: 400,
    });
  return settings;
}

/** Starts a release (the candidate published first when given as resources, without becoming the latest). */
export function* startReleaseRule(
  t: RuleContext,
  req: StartReleaseRequest,
  candidateResources: NamedResources | null,
): Rule<Release> {
  const settings = releaseSettings(req);
  const running = yield* runningRelease();
  if (running)
    throw new ConflictError(
      'releaseId',
      `Release ${running.releaseId} is still running (candidate ${running.candidate}); promote or abort it first (agl release promote|abort).`,
    );
  const baselineId = req.baseline ?? (yield* call('getLatestResourcesId'));
  if (!baselineId)
    throw new ValidationError(
      'baseline: no resources are published yet, so there is no baseline; publish one first or pass --baseline <id>.',
      [{ path: 'baseline', message: 'no latest resources' }],
      { status: 400 },
    );
  const baseline = yield* requireResources(baselineId, 'baseline');
  let candidateId: string;
  if (candidateResources) {
    candidateId = req.candidateId ?? newResourcesId();
    if (candidateId === baseline.resourcesId)
      throw new ValidationError(
        `candidate_id: ${candidateId} is the baseline's id; publish the candidate under a new id.`,
        [{ path: 'candidate_id', message: 'same as baseline' }],
        { status: 400 },
      );
    const existing = yield* call('getResources', candidateId);
    const record: ResourcesUpdate = existing
      ? { ...existing, resources: candidateResources, updateTime: t.now, version: existing.version + 1 }
      : { resourcesId: candidateId, createTime: t.now, updateTime: t.now, version: 1, resources: candidateResources };
    yield* call('putResources', record, { latest: false });
  } else {
    if (!req.candidate)
      throw new ValidationError(
        'candidate: name the candidate resources id (--candidate <id>) or give candidate_resources.',
        [{ path: 'candidate', message: 'missing' }],
        { status: 400 },
      );
    candidateId = (yield* requireResources(req.candidate, 'candidate')).resourcesId;
    if (candidateId === baseline.resourcesId)
      throw new ValidationError(
        `candidate: ${candidateId} is also the baseline; a release compares two different resources ids.`,
        [{ path: 'candidate', message: 'same as baseline' }],
        { status: 400 },
      );
  }
  const share = settings.shares[0]!;
  const release: Release = {
    releaseId: newReleaseId(),
    state: 'running',
    baseline: baseline.resourcesId,
    candidate: candidateId,
    ...settings,
    stage: 0,
    share,
    createTime: t.now,
    updateTime: t.now,
    endTime: null,
    stageStartTime: t.now,
    shareHistory: [{ time: t.now, share }],
    arms: null,
    decisions: [
      {
        time: t.now,
        action: 'start',
        share,
        by: 'manual',
        reason: `candidate ${candidateId} against baseline ${baseline.resourcesId}`,
        figures: {
          shares: settings.shares,
          metric: settings.metric,
          guards: settings.guards,
          min_requests: settings.minRequests,
          alpha: settings.alpha,
        },
      },
    ],
  };
  yield* call('putRelease', release);
  return release;
}

/** Applies a decision to a running release (and, on promotion, makes the candidate the latest). */
function* applyDecision(t: RuleContext, release: Release, decision: ReleaseDecision): Rule<Release> {
  release.decisions.push(decision);
  release.updateTime = t.now;
  if (decision.action === 'ramp') {
    release.stage += 1;
    release.share = decision.share;
    release.stageStartTime = t.now;
  } else if (decision.action === 'promote' || decision.action === 'rollback' || decision.action === 'abort') {
    release.state =
      decision.action === 'promote' ? 'promoted' : decision.action === 'rollback' ? 'rolled_back' : 'aborted';
    release.share = decision.action === 'promote' ? 1 : 0;
    release.endTime = t.now;
    if (decision.action === 'promote') yield* call('setLatestResourcesId', release.candidate);
  }
  if (release.shareHistory.at(-1)?.share !== release.share)
    release.shareHistory.push({ time: t.now, share: release.share });
  yield* call('putRelease', release);
  return release;
}

/** A user's promote or abort of a running release. */
export function* endReleaseRule(
  t: RuleContext,
  id: string,
  action: 'promote' | 'abort',
  reason: string | undefined,
): Rule<Release> {
  const release = yield* requireRelease(id);
  if (release.state !== 'running')
    throw new ConflictError(
      'state',
      `Release ${id} has already ended (${release.state}); only a running release can be ${action === 'promote' ? 'promoted' : 'aborted'}.`,
    );
  const decision: ReleaseDecision = {
    time: t.now,
    action,
    share: action === 'promote' ? 1 : 0,
    by: 'manual',
    reason: reason ?? (action === 'promote' ? 'promoted by a user' : 'aborted by a user'),
    figures: release.arms ? { baseline: { ...release.arms.baseline }, candidate: { ...release.arms.candidate } } : {},
  };
  return yield* applyDecision(t, release, decision);
}

/**
 * Stores an evaluation's verdict, unless the release changed since it was read (`updateTime`): then nothing is
 * written, and the next evaluation starts again from the new state.
 */
export function* applyVerdictRule(
  t: RuleContext,
  id: string,
  seenUpdateTime: number,
  verdict: ReleaseVerdict,
): Rule<Release> {
  const release = yield* requireRelease(id);
  if (release.state !== 'running' || release.updateTime !== seenUpdateTime) return release;
  release.arms = verdict.arms;
  if (!verdict.decision) {
    yield* call('putRelease', release);
    return release;
  }
  return yield* applyDecision(t, release, { ...verdict.decision, time: t.now, by: 'automatic' });
}

export function* getReleaseRule(id: string): Rule<Release | null> {
  return yield* call('getRelease', id);
}

export function* listReleasesRule(): Rule<Release[]> {
  return (yield* call('listReleases')).reverse();
}

export function* servingResourcesRule(): Rule<ServingResources> {
  const latestId = yield* call('getLatestResourcesId');
  const latest = latestId ? yield* call('getResources', latestId) : null;
  const running = yield* runningRelease();
  if (!running) return { latest, release: null };
  const baseline = yield* call('getResources', running.baseline);
  const candidate = yield* call('getResources', running.candidate);
  if (!baseline || !candidate) return { latest, release: null };
  return { latest, release: { releaseId: running.releaseId, share: running.share, baseline, candidate } };
}
