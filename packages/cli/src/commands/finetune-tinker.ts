import { UserError } from '@agl/core/errors';
import type { LightningStore } from '@agl/core/store';
import { ServiceClient } from '@agl/tinker';
import { describeRedactionSummary, fineTuneTinker, type FineTuningSelection } from '@agl/trainer/finetune';
import type { CliIo } from './output';
import { printCandidateRelease, startCandidateRelease, type ReleaseFlags } from './release-flags';

/** The `agl finetune` flags the Tinker provider reads. */
export interface TinkerFinetuneFlags extends ReleaseFlags {
  baseModel: string;
  method: string;
  baseUrl?: string;
  suffix?: string;
  loraRank?: number;
  steps?: number;
  epochs?: number;
  nEpochs?: number;
  batchSize?: number;
  learningRate?: number;
  saveEvery?: number;
  tokenizer?: string;
  llmResource?: string;
  /** `--no-redact` sets it false. */
  redact?: boolean;
  /** `--release` (with the release flags): publish as a release candidate, not as the latest. */
  release?: boolean;
  json?: boolean;
}

/**
 * `agl finetune --provider tinker`: SFT through the Tinker API (`TINKER_API_KEY`, `TINKER_BASE_URL` or `--base-url`).
 * Training runs in this process, so it is always followed to the end (`--wait` is implied); Ctrl-C saves the state
 * and a rerun resumes.
 */
export async function runTinkerFinetune(
  store: LightningStore,
  flags: TinkerFinetuneFlags,
  selection: FineTuningSelection,
  io: CliIo,
  signal: AbortSignal,
): Promise<void> {
  if (flags.method !== 'sft') {
    throw new UserError(
      "--provider tinker supports --method sft only: Tinker's built-in losses (cross_entropy, importance_sampling, ppo, cispo, dro) have no DPO loss. Use --method sft, or --provider openai / agl export dpo for DPO.",
    );
  }
  if (flags.steps !== undefined && (flags.epochs ?? flags.nEpochs) !== undefined) {
    throw new UserError('Give --steps or --epochs, not both.');
  }
  const baseUrl = flags.baseUrl ?? (process.env.TINKER_BASE_URL || undefined);
  const service = new ServiceClient(baseUrl ? { baseUrl } : {});
  try {
    const epochs = flags.epochs ?? flags.nEpochs;
    const result = await fineTuneTinker({
      store,
      service,
      baseModel: flags.baseModel,
      method: 'sft',
      selection,
      ...(flags.suffix !== undefined ? { suffix: flags.suffix } : {}),
      ...(flags.loraRank !== undefined ? { loraRank: flags.loraRank } : {}),
      ...(flags.steps !== undefined ? { steps: flags.steps } : {}),
      ...(epochs !== undefined ? { epochs } : {}),
      ...(flags.batchSize !== undefined ? { batchSize: flags.batchSize } : {}),
      ...(flags.learningRate !== undefined ? { learningRate: flags.learningRate } : {}),
      ...(flags.saveEvery !== undefined ? { saveEvery: flags.saveEvery } : {}),
      ...(flags.tokenizer !== undefined ? { tokenizer: flags.tokenizer } : {}),
      ...(flags.llmResource !== undefined ? { llmResourceName: flags.llmResource } : {}),
      ...(flags.redact === false ? { redact: false } : {}),
      ...(flags.release ? { publish: false } : {}),
      signal,
      onProgress: (line) => io.err(line),
    });
    if (flags.release && result.resources) {
      io.err(describeRedactionSummary(result.redaction));
      const release = await startCandidateRelease(store, result.resources, flags);
      return printCandidateRelease(io, release, flags.json);
    }
    if (flags.json) {
      io.out(JSON.stringify(result, null, 2));
      return;
    }
    io.out(`training_run=${result.trainingRunId}`);
    io.out(`status=${result.status}`);
    if (result.samplerPath) io.out(`sampler_path=${result.samplerPath}`);
    if (result.published) io.out(`resources_id=${result.published.resourcesId}`);
    io.out(describeRedactionSummary(result.redaction));
  } finally {
    await service.close();
  }
}
