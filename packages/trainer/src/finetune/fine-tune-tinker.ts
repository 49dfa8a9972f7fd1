import { createHash } from 'node:crypto';
import { UserError } from '@agl/core/errors';
import type { NamedResourcesInput, ResourcesUpdate } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import {
  modelInputFromTokens,
  renderSupervisedExamples,
  tokenizerForModel,
  type ChatMessage,
  type ChatTokenizer,
  type ChatTool,
  type Datum,
  type ServiceClient,
  type TrainingClient,
} from '@agl/tinker';
import type { SftRecord } from '../export/sft-records';
import type { RedactionSummary, RedactOption } from '../export/training-data-redaction';
import { buildFineTuningData, type FineTuningSelection } from './fine-tuning-data';
import {
  closeJobRecord,
  findRunningJobRecord,
  saveJobRecord,
  updateJobRecordProgress,
  type FineTuningFingerprint,
} from './job-record';
import { finishTunedModel, type TunedModelTarget } from './publish-tuned-model';

/** Options of {@link fineTuneTinker}. */
export interface FineTuneTinkerOptions {
  store: LightningStore;
  /** A Tinker service client (hosted Tinker or a Tinker-compatible server). */
  service: ServiceClient;
  baseModel: string;
  /** Only `sft`: Tinker's built-in losses have no DPO loss. */
  method: 'sft';
  selection?: FineTuningSelection;
  /** Names the checkpoints and the sampler weights (`<suffix>-000040`). */
  suffix?: string;
  /** LoRA rank. Default 32. */
  loraRank?: number;
  /** Optimizer steps; default: `epochs` passes over the datums. */
  steps?: number;
  /** Passes over the datums when `steps` is not given. Default 1. */
  epochs?: number;
  /** Datums per step. Default 8. */
  batchSize?: number;
  /** Adam's learning rate. Default 1e-4. */
  learningRate?: number;
  /** Save the training state every this many steps, so a restart resumes from it. Default 5. */
  saveEvery?: number;
  /** A tokenizer (or `--tokenizer` source) for the chat template; default: the base model's built-in one. */
  tokenizer?: ChatTokenizer | string;
  /** Mask secrets in the transcripts before they are tokenized and sent (default on; `false` = `--no-redact`). */
  redact?: RedactOption;
  /** `false`: return the resources naming the sampler path without publishing them (e.g. for a release). */
  publish?: boolean;
  /** Which LLM resource names the tuned sampler path. */
  llmResourceName?: string;
  /** On abort: save the state, leave the run to be resumed, and return `detached`. */
  signal?: AbortSignal;
  /** One line per step (`step 3/12 loss=1.2345`), and per save. */
  onProgress?: (line: string) => void;
}

/** What {@link fineTuneTinker} ends with. */
export interface FineTuneTinkerResult {
  /** The training run (the first model id; a resumed run keeps it). */
  trainingRunId: string;
  status: 'succeeded' | 'detached';
  /** True when an earlier run was resumed. */
  attached: boolean;
  nExamples: number;
  nDatums: number;
  steps: number;
  /** The mean per-token loss of the last step run here (null when none ran). */
  finalLoss: number | null;
  /** `tinker://…/sampler_weights/…` */
  samplerPath: string | null;
  resources: NamedResourcesInput | null;
  published: ResourcesUpdate | null;
  /** What redaction masked in the transcripts sent. */
  redaction: RedactionSummary;
}

/** A supervised datum from a rendered example: input = tokens[:-1], targets = tokens[1:], weights shifted alike. */
export function sftDatum(tokens: readonly number[], weights: readonly number[]): Datum {
  return {
    model_input: modelInputFromTokens(tokens.slice(0, -1)),
    loss_fn_inputs: { target_tokens: tokens.slice(1), weights: weights.slice(1) },
  };
}

/** Renders SFT transcripts with the base model's chat template into cross-entropy datums (prompt weight 0). */
export function sftDatums(tok: ChatTokenizer, records: readonly SftRecord[]): Datum[] {
  return records.flatMap((record) =>
    renderSupervisedExamples(tok, record.messages as ChatMessage[], {
      ...(record.tools ? { tools: record.tools as unknown as ChatTool[] } : {}),
    }).map((example) => sftDatum(example.tokens, example.weights)),
  );
}

const pad = (n: number) => String(n).padStart(6, '0');

function datumsHash(datums: readonly Datum[]): string {
  return createHash('sha256').update(JSON.stringify(datums)).digest('hex').slice(0, 16);
}

/**
 * Supervised fine-tuning through the Tinker API: stored transcripts (the `agl export sft` selection) → the base
 * model's chat template → cross-entropy datums (assistant tokens weight 1, prompt 0) → one forward_backward and one
 * optim_step per step → sampler weights → one new resources version whose LLM names the `tinker://` sampler path. The
 * training run, its step and its last saved state are kept in the store (a job record), so a rerun with the same base
 * model, suffix and base URL resumes from the last saved state instead of starting again.
 */
export async function fineTuneTinker(options: FineTuneTinkerOptions): Promise<FineTuneTinkerResult> {
  const { store, service } = options;
  if ((options.method as string) !== 'sft') {
    throw new UserError(
      `agl finetune --provider tinker supports --method sft only; Tinker's built-in losses have no DPO loss. Use --provider openai for DPO, or agl export dpo.`,
    );
  }
  const progress = options.onProgress ?? (() => {});
  const fingerprint: FineTuningFingerprint = {
    provider: 'tinker',
    baseUrl: service.http.baseUrl,
    baseModel: options.baseModel,
    method: 'sft',
    suffix: options.suffix ?? null,
  };
  const data = await buildFineTuningData({
    store,
    method: 'sft',
    ...(options.selection ? { selection: options.selection } : {}),
    ...(options.redact !== undefined ? { redact: options.redact } : {}),
  });
  const records = data.records as SftRecord[];
  let record = await findRunningJobRecord(store, fingerprint);
  const attached = record !== null;
  if (!record && records.length === 0) {
    throw new UserError(
      `No transcripts to train on: 0 succeeded rollouts matched (of ${data.nRollouts}). Lower --min-reward, widen --since or --agent, or record more runs. Nothing was sent to Tinker.`,
    );
  }
  const tok =
    typeof options.tokenizer === 'object'
      ? options.tokenizer
      : await tokenizerForModel(options.baseModel, {
          ...(options.tokenizer ? { tokenizer: options.tokenizer } : {}),
          // A server that serves its own tokenizer (the embedded policy, `agl tiny serve --tinker`).
          serverTokenizer: (ref) => service.serverTokenizerFiles(ref),
        });
  const datums = sftDatums(tok, records);
  const batchSize = options.batchSize ?? 8;
  const saved = record?.progress ?? {};
  const total =
    typeof saved.total_steps === 'number'
      ? saved.total_steps
      : (options.steps ?? (options.epochs ?? 1) * Math.ceil(datums.length / batchSize));
  let training: TrainingClient;
  let step = 0;
  if (record) {
    step = typeof saved.step === 'number' ? saved.step : 0;
    const statePath = typeof saved.state_path === 'string' ? saved.state_path : null;
    progress(
      `resuming Tinker training run ${record.jobId} at step ${step}/${total}${statePath ? ` from ${statePath}` : ''}`,
    );
    if (saved.datums_hash !== undefined && saved.datums_hash !== datumsHash(datums)) {
      progress('the selected transcripts changed since the run started; the remaining steps train on the current ones');
    }
    training = statePath
      ? await service.createTrainingClientFromState(statePath, { withOptimizer: true })
      : await service.createLoraTrainingClient({ baseModel: options.baseModel, rank: options.loraRank ?? 32 });
  } else {
    training = await service.createLoraTrainingClient({ baseModel: options.baseModel, rank: options.loraRank ?? 32 });
    record = await saveJobRecord(store, {
      jobId: training.modelId,
      trainingFileId: '',
      nExamples: records.length,
      fingerprint,
    });
    await updateJobRecordProgress(store, record, { step: 0, total_steps: total, datums_hash: datumsHash(datums) });
    progress(
      `started Tinker training run ${training.modelId}: ${datums.length} datums from ${records.length} transcripts, ${total} steps of ${batchSize}, LoRA rank ${options.loraRank ?? 32}`,
    );
  }
  const result: FineTuneTinkerResult = {
    trainingRunId: record.jobId,
    status: 'succeeded',
    attached,
    nExamples: records.length,
    nDatums: datums.length,
    steps: total,
    finalLoss: null,
    samplerPath: typeof saved.sampler_path === 'string' ? saved.sampler_path : null,
    resources: null,
    published: null,
    redaction: data.redaction,
  };
  const name = options.suffix ?? 'agl-sft';
  const saveState = async (at: number) => {
    const { path } = await training.saveWeights(`${name}-state-${pad(at)}`);
    await updateJobRecordProgress(store, record!, { step: at, state_path: path });
    progress(`saved training state ${path}`);
  };
  while (result.samplerPath === null && step < total) {
    if (options.signal?.aborted) {
      if (step > 0) await saveState(step);
      progress(
        `left Tinker training run ${record.jobId} at step ${step}/${total}; run the same command again to resume`,
      );
      return { ...result, status: 'detached' };
    }
    step++;
    const batch = Array.from({ length: Math.min(batchSize, datums.length) }, (_, j) => {
      return datums[((step - 1) * batchSize + j) % datums.length]!;
    });
    const out = await training.forwardBackward(batch, 'cross_entropy');
    const weight = batch.reduce((n, d) => n + (d.loss_fn_inputs.weights as number[]).reduce((a, b) => a + b, 0), 0);
    result.finalLoss = (out.metrics['loss:sum'] ?? Number.NaN) / Math.max(weight, 1);
    await training.optimStep({ learningRate: options.learningRate ?? 1e-4 });
    progress(`step ${step}/${total} loss=${result.finalLoss.toFixed(4)}`);
    const every = options.saveEvery ?? 5;
    if (every > 0 && step % every === 0 && step < total) await saveState(step);
  }
  if (result.samplerPath === null) {
    result.samplerPath = (await training.saveWeightsForSampler(`${name}-${pad(total)}`)).path;
    await updateJobRecordProgress(store, record, { step: total, sampler_path: result.samplerPath });
    progress(`saved sampler weights ${result.samplerPath}`);
  }
  const target: TunedModelTarget = {
    endpoint: service.http.baseUrl,
    replaceEndpoint: true,
    ...(options.llmResourceName !== undefined ? { llmResourceName: options.llmResourceName } : {}),
  };
  const finished = await finishTunedModel(store, result.samplerPath, target, { publish: options.publish, progress });
  result.resources = finished.resources;
  result.published = finished.published;
  await closeJobRecord(store, record, {
    status: 'succeeded',
    fine_tuned_model: result.samplerPath,
    resources_id: result.published?.resourcesId ?? null,
  });
  return result;
}
