import { canonicalJson } from '@agl/core/transitions';
import type { JsonObject, Rollout } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';

/** `metadata.agl_kind` of the rollout that records a hosted fine-tuning job. */
export const FINE_TUNING_JOB_KIND = 'fine_tuning_job';

/**
 * What identifies "the same fine-tuning run" across restarts of `agl finetune`: a running job record with an equal
 * fingerprint is re-attached to instead of starting a second job.
 */
export interface FineTuningFingerprint {
  provider: 'openai' | 'tinker';
  baseUrl: string;
  baseModel: string;
  method: 'sft' | 'dpo';
  suffix: string | null;
}

/** The job record as stored in the record rollout's metadata. */
export interface FineTuningJobRecord {
  /** The record rollout's id. */
  recordId: string;
  attemptId: string;
  jobId: string;
  trainingFileId: string;
  nExamples: number;
  fingerprint: FineTuningFingerprint;
  /** Where a client-driven run (Tinker) stands: `step`, `total_steps`, `state_path`, `sampler_path`. */
  progress?: JsonObject;
}

/** True for the rollouts that only record a fine-tuning job (exports and training data skip them). */
export function isFineTuningJobRecord(rollout: Pick<Rollout, 'metadata'>): boolean {
  return rollout.metadata?.agl_kind === FINE_TUNING_JOB_KIND;
}

function sameFingerprint(a: unknown, b: FineTuningFingerprint): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/**
 * The running job record with this fingerprint, if any. Job records are rollouts with mode `null`, status `running`
 * while the job is followed, `metadata.agl_kind = 'fine_tuning_job'`, `metadata.job_id`, `metadata.training_file`,
 * `metadata.n_examples` and `metadata.fingerprint`; they carry no spans, so they never become training data.
 */
export async function findRunningJobRecord(
  store: LightningStore,
  fingerprint: FineTuningFingerprint,
): Promise<FineTuningJobRecord | null> {
  const running = await store.queryRollouts({
    statusIn: ['preparing', 'running'],
    sortBy: 'startTime',
    sortOrder: 'desc',
  });
  for (const rollout of running.items) {
    const m = rollout.metadata;
    if (!isFineTuningJobRecord(rollout) || !sameFingerprint(m?.fingerprint, fingerprint)) continue;
    const attempt = await store.getLatestAttempt(rollout.rolloutId);
    if (!attempt || typeof m?.job_id !== 'string') continue;
    return {
      recordId: rollout.rolloutId,
      attemptId: attempt.attemptId,
      jobId: m.job_id,
      trainingFileId: typeof m.training_file === 'string' ? m.training_file : '',
      nExamples: typeof m.n_examples === 'number' ? m.n_examples : 0,
      fingerprint,
      ...(isJsonObject(m.progress) ? { progress: m.progress } : {}),
    };
  }
  return null;
}

/** Stores a new running job record right after the provider accepted the job. */
export async function saveJobRecord(
  store: LightningStore,
  record: Omit<FineTuningJobRecord, 'recordId' | 'attemptId'>,
): Promise<FineTuningJobRecord> {
  const started = await store.startRollout({
    input: { fine_tuning_job: record.jobId },
    mode: null,
    metadata: {
      agl_kind: FINE_TUNING_JOB_KIND,
      job_id: record.jobId,
      training_file: record.trainingFileId,
      n_examples: record.nExamples,
      fingerprint: { ...record.fingerprint },
    },
  });
  return { ...record, recordId: started.rolloutId, attemptId: started.attempt.attemptId };
}

/** Merges `progress` into the running record's `metadata.progress` (a Tinker run's step and last saved state). */
export async function updateJobRecordProgress(
  store: LightningStore,
  record: FineTuningJobRecord,
  progress: JsonObject,
): Promise<void> {
  const rollout = await store.getRolloutById(record.recordId);
  const metadata = rollout?.metadata ?? {};
  const merged = { ...(isJsonObject(metadata.progress) ? metadata.progress : {}), ...progress };
  await store.updateRollout(record.recordId, { metadata: { ...metadata, progress: merged } });
  record.progress = merged;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Ends a job record: `succeeded` with the tuned model and published resources id, or `failed` with the reason. */
export async function closeJobRecord(
  store: LightningStore,
  record: FineTuningJobRecord,
  outcome: JsonObject & { status: 'succeeded' | 'failed' | 'cancelled' },
): Promise<void> {
  const rollout = await store.getRolloutById(record.recordId);
  await store.updateRollout(record.recordId, { metadata: { ...(rollout?.metadata ?? {}), outcome } });
  await store.updateAttempt(record.recordId, record.attemptId, {
    status: outcome.status === 'succeeded' ? 'succeeded' : 'failed',
  });
}
