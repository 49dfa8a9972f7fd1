import type OpenAI from 'openai';
import { UserError } from '@agl/core/errors';
import type { NamedResourcesInput, ResourcesUpdate } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { sleep as abortableSleep } from '../runner/idle-gate';
import { buildFineTuningData, type FineTuningSelection } from './fine-tuning-data';
import { describeRedactionSummary, type RedactionSummary, type RedactOption } from '../export/training-data-redaction';
import { closeJobRecord, findRunningJobRecord, saveJobRecord, type FineTuningFingerprint } from './job-record';
import { finishTunedModel, type TunedModelTarget } from './publish-tuned-model';
import {
  validateFineTuningRecords,
  type FineTuningLimits,
  type FineTuningMethod,
} from './validate-fine-tuning-records';

/** The parts of the official `openai` client the fine-tuning loop calls. */
export type FineTuningClient = Pick<OpenAI, 'files' | 'fineTuning' | 'baseURL'>;

/** Options of {@link fineTuneOpenAi}. */
export interface FineTuneOpenAiOptions {
  store: LightningStore;
  /** The official client, with `baseURL` and `apiKey` set (OpenAI, Azure OpenAI or a compatible provider). */
  client: FineTuningClient;
  baseModel: string;
  method: FineTuningMethod;
  selection?: FineTuningSelection;
  /** Up to 64 characters the provider adds to the tuned model's name. */
  suffix?: string;
  /** Passed through as `method.{supervised|dpo}.hyperparameters` (e.g. `{ n_epochs: 3 }`, DPO `{ beta: 0.1 }`). */
  hyperparameters?: Record<string, unknown>;
  limits?: FineTuningLimits;
  /** Follow the job to its end (default true). Without it the call returns once the job is created or found. */
  wait?: boolean;
  /** On `signal` abort, cancel the provider job too (default: leave it running; a rerun re-attaches). */
  cancelOnExit?: boolean;
  signal?: AbortSignal;
  /** Milliseconds between job polls (default 5000). */
  pollIntervalMs?: number;
  /** Publish the tuned model as a new resources version on success (default true). */
  publish?: boolean;
  /** Which LLM resource names the tuned model. */
  llmResourceName?: string;
  /** One line per step: upload, job, each provider event. */
  onProgress?: (line: string) => void;
  /** Mask secrets in the uploaded lines (default on; `false` = `--no-redact`). */
  redact?: RedactOption;
}

/** What {@link fineTuneOpenAi} ends with. */
export interface FineTuneOpenAiResult {
  jobId: string;
  /** The job's last status, or `detached` when `signal` aborted and the job was left running. */
  status: 'validating_files' | 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled' | 'detached';
  /** True when a running job from an earlier run was re-attached instead of starting one. */
  attached: boolean;
  nExamples: number;
  fineTunedModel: string | null;
  /** The resources naming the tuned model (published unless `publish: false`). */
  resources: NamedResourcesInput | null;
  /** The new resources version, when published. */
  published: ResourcesUpdate | null;
  /** Last training loss the provider reported in a metrics event, and the trained tokens. */
  trainLoss: number | null;
  trainedTokens: number | null;
  /** What redaction masked in the uploaded lines; `null` when a running job was re-attached (nothing uploaded). */
  redaction: RedactionSummary | null;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * The hosted fine-tuning loop for the OpenAI API: store → training lines (the `agl export sft|dpo` code) → local
 * check of the provider's format and limits → upload (`purpose: fine-tune`) → job (`method: supervised|dpo`,
 * hyperparameters, suffix) → progress from the job's events → on success one new resources version naming the tuned
 * model. The job id is kept in the store (a job record, see `findRunningJobRecord`), so a rerun with the same base
 * model, method, suffix and endpoint re-attaches instead of starting a second job.
 *
 * Throws `ValidationError` for invalid training data (nothing uploaded) and `UserError` for a failed or cancelled job
 * (nothing published).
 */
export async function fineTuneOpenAi(options: FineTuneOpenAiOptions): Promise<FineTuneOpenAiResult> {
  const { store, client, method } = options;
  const progress = options.onProgress ?? (() => {});
  const fingerprint: FineTuningFingerprint = {
    provider: 'openai',
    baseUrl: client.baseURL,
    baseModel: options.baseModel,
    method,
    suffix: options.suffix ?? null,
  };
  let record = await findRunningJobRecord(store, fingerprint);
  const attached = record !== null;
  let redaction: RedactionSummary | null = null;
  if (record) progress(`re-attaching to fine-tuning job ${record.jobId} (started by an earlier run)`);
  else {
    const data = await buildFineTuningData({
      store,
      method,
      ...(options.selection ? { selection: options.selection } : {}),
      ...(options.redact !== undefined ? { redact: options.redact } : {}),
    });
    redaction = data.redaction;
    validateFineTuningRecords(data.records, method, options.limits);
    const body = data.records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const file = await client.files.create({
      file: new File([body], `agl-${method}.jsonl`, { type: 'application/jsonl' }),
      purpose: 'fine-tune',
    });
    progress(
      `uploaded ${data.records.length} ${method} examples from ${data.nRollouts} rollouts as ${file.id} ` +
        `(${describeRedactionSummary(data.redaction)})`,
    );
    const hyperparameters = options.hyperparameters ?? {};
    const job = await client.fineTuning.jobs
      .create({
        model: options.baseModel,
        training_file: file.id,
        ...(options.suffix !== undefined ? { suffix: options.suffix } : {}),
        method:
          method === 'sft'
            ? { type: 'supervised', supervised: { hyperparameters } }
            : { type: 'dpo', dpo: { hyperparameters } },
      })
      .catch((error: unknown) => {
        throw jobRefused(error);
      });
    record = await saveJobRecord(store, {
      jobId: job.id,
      trainingFileId: file.id,
      nExamples: data.records.length,
      fingerprint,
    });
    progress(`started fine-tuning job ${job.id} (${method}, base model ${options.baseModel})`);
  }
  const result: FineTuneOpenAiResult = {
    jobId: record.jobId,
    status: 'validating_files',
    attached,
    nExamples: record.nExamples,
    fineTunedModel: null,
    resources: null,
    published: null,
    trainLoss: null,
    trainedTokens: null,
    redaction,
  };
  let job = await client.fineTuning.jobs.retrieve(record.jobId);
  result.status = job.status;
  if (options.wait === false && !TERMINAL.has(job.status)) return result;
  const signal = options.signal ?? new AbortController().signal;
  const seen = new Set<string>();
  for (;;) {
    for (const event of await newEvents(client, record.jobId, seen)) {
      progress(`[${event.level}] ${event.message}`);
      const data = event.data as { train_loss?: unknown } | undefined;
      if (event.type === 'metrics' && typeof data?.train_loss === 'number') result.trainLoss = data.train_loss;
    }
    if (TERMINAL.has(job.status)) break;
    if (signal.aborted) {
      if (!options.cancelOnExit) {
        progress(`left job ${record.jobId} running; run the same command again to re-attach`);
        return { ...result, status: 'detached' };
      }
      job = await client.fineTuning.jobs.cancel(record.jobId);
      progress(`cancelled job ${record.jobId} (--cancel-on-exit)`);
      continue;
    }
    await abortableSleep(options.pollIntervalMs ?? 5000, signal);
    job = await client.fineTuning.jobs.retrieve(record.jobId);
  }
  result.status = job.status;
  result.trainedTokens = job.trained_tokens;
  if (job.status !== 'succeeded' || !job.fine_tuned_model) {
    const why = job.error
      ? `${job.error.code}: ${job.error.message.replace(/\.$/u, '')}`
      : `the job ended ${job.status}`;
    await closeJobRecord(store, record, { status: job.status === 'cancelled' ? 'cancelled' : 'failed', reason: why });
    throw new UserError(
      `Fine-tuning job ${job.id} ${job.status}: ${why}. Nothing was published. ` +
        'Fix the cause (see the job events above) and run agl finetune again to start a new job.',
    );
  }
  result.fineTunedModel = job.fine_tuned_model;
  const target: TunedModelTarget = {
    endpoint: client.baseURL,
    ...(options.llmResourceName !== undefined ? { llmResourceName: options.llmResourceName } : {}),
  };
  const finished = await finishTunedModel(store, job.fine_tuned_model, target, { publish: options.publish, progress });
  result.resources = finished.resources;
  result.published = finished.published;
  await closeJobRecord(store, record, {
    status: 'succeeded',
    fine_tuned_model: job.fine_tuned_model,
    resources_id: result.published?.resourcesId ?? null,
  });
  return result;
}

/** Events not printed yet, oldest first (the API lists newest first). */
async function newEvents(client: FineTuningClient, jobId: string, seen: Set<string>) {
  const fresh = [];
  for await (const event of client.fineTuning.jobs.listEvents(jobId, { limit: 50 })) {
    if (seen.has(event.id)) break;
    fresh.push(event);
  }
  for (const e of fresh) seen.add(e.id);
  return fresh.reverse();
}

/**
 * OpenAI refused to create the job: its own message, and the way on. OpenAI's self-serve fine-tuning takes no new jobs
 * from 2027-01-06 (organisations that never fine-tuned lost access on 2026-05-07); Tinker trains open-weight models.
 */
function jobRefused(error: unknown): unknown {
  const status = (error as { status?: unknown }).status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return error;
  const body = (error as { error?: { message?: unknown } }).error;
  const message = typeof body?.message === 'string' ? body.message : (error as Error).message;
  return new UserError(
    `OpenAI refused the fine-tuning job (HTTP ${status}): ${message.replace(/\.$/u, '')}. ` +
      'OpenAI takes no new self-serve fine-tuning jobs from 2027-01-06; train an open-weight model through Tinker instead: ' +
      'agl finetune --provider tinker --base-model Qwen/Qwen3-8B --method sft (set TINKER_API_KEY).',
    { cause: error },
  );
}
