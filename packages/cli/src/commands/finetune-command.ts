import { Command, Option } from 'commander';
import { UserError } from '@agl/core/errors';
import { isRecord } from '@agl/core/guards';
import {
  describeRedactionSummary,
  fineTuneOpenAi,
  type FineTuningClient,
  type FineTuningMethod,
} from '@agl/trainer/finetune';
import { numberFlag } from './flag-values';
import { providerFetch } from './provider-fetch';
import { runTinkerFinetune } from './finetune-tinker';
import { processIo, type CliIo } from './output';
import { withCliStore, withStoreFlags, type StoreFlags } from './store-options';
import {
  printCandidateRelease,
  releaseRequest,
  requireReleaseFlag,
  startCandidateRelease,
  withReleaseFlags,
  type ReleaseFlags,
} from './release-flags';

interface FinetuneFlags extends StoreFlags, ReleaseFlags {
  /** `--release`: publish the tuned model as a release candidate instead of the latest. */
  release?: boolean;
  provider: 'openai' | 'tinker';
  baseModel: string;
  method: FineTuningMethod;
  loraRank?: number;
  steps?: number;
  epochs?: number;
  learningRate?: number;
  saveEvery?: number;
  tokenizer?: string;
  minReward?: number;
  agent?: string;
  since?: string;
  suffix?: string;
  wait?: boolean;
  baseUrl?: string;
  cancelOnExit?: boolean;
  hyperparameters?: string;
  nEpochs?: number;
  batchSize?: number;
  learningRateMultiplier?: number;
  beta?: number;
  llmResource?: string;
  pollInterval: number;
  json?: boolean;
  redact: boolean;
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--since`: an ISO date/time, or a duration ago such as `7d`, `12h`, `30m`. Seconds since the epoch. */
export function parseSince(value: string, nowSeconds = Date.now() / 1000): number {
  const duration = /^(\d+(?:\.\d+)?)([smhd])$/u.exec(value.trim());
  if (duration) return nowSeconds - Number(duration[1]) * UNITS[duration[2]!]!;
  const ms = Date.parse(value);
  if (Number.isNaN(ms))
    throw new UserError(
      `--since got ${JSON.stringify(value)}; pass an ISO date such as 2026-01-31 or a duration such as 7d.`,
    );
  return ms / 1000;
}

/** `--hyperparameters` JSON merged with the `--n-epochs` / `--batch-size` / `--learning-rate-multiplier` / `--beta` flags. */
export function parseHyperparameters(flags: FinetuneFlags): Record<string, unknown> {
  let base: Record<string, unknown> = {};
  if (flags.hyperparameters !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags.hyperparameters);
    } catch (error) {
      throw new UserError(
        `--hyperparameters is not valid JSON (${(error as Error).message}); pass an object such as '{"n_epochs":3}'.`,
      );
    }
    if (!isRecord(parsed)) throw new UserError(`--hyperparameters must be a JSON object such as '{"n_epochs":3}'.`);
    base = parsed;
  }
  const shortcuts: Array<[string, number | undefined]> = [
    ['n_epochs', flags.nEpochs],
    ['batch_size', flags.batchSize],
    ['learning_rate_multiplier', flags.learningRateMultiplier],
    ['beta', flags.beta],
  ];
  for (const [key, value] of shortcuts) if (value !== undefined) base[key] = value;
  return base;
}

async function openAiClient(baseURL: string | undefined): Promise<FineTuningClient> {
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey)
    throw new UserError('OPENAI_API_KEY is not set; export the key of the provider that runs the fine-tuning job.');
  const { default: OpenAI } = await import('openai').catch(() => {
    throw new UserError('agl finetune needs the `openai` package; run `npm install openai`.');
  });
  // Network failures name the URL and the flag that sets it (the SDK alone says only "Connection error.").
  const fetch = providerFetch('the fine-tuning provider', 'check --base-url (or OPENAI_BASE_URL)');
  return new OpenAI({ apiKey, fetch, ...(baseURL ? { baseURL } : {}) });
}

/**
 * `agl finetune --provider openai|tinker --base-model <model> --method sft|dpo`: training data from the store → the
 * provider's fine-tuning API (OpenAI) or SFT steps through the Tinker API → one new resources version naming the tuned
 * model (OpenAI's tuned model name, or Tinker's `tinker://…/sampler_weights/…` path).
 */
export function finetuneCommand(io: CliIo = processIo): Command {
  const cmd = new Command('finetune').description(
    'fine-tune a model on stored transcripts (OpenAI fine-tuning API, or SFT through the Tinker API) and publish it as a new resources version',
  );
  withStoreFlags(cmd)
    .addOption(
      new Option(
        '--provider <name>',
        'openai: OpenAI fine-tuning API (no new jobs from 2027-01-06); tinker: LoRA SFT through the Tinker API (TINKER_API_KEY, TINKER_BASE_URL)',
      )
        .choices(['openai', 'tinker'])
        .default('openai'),
    )
    .requiredOption('--base-model <model>', 'model to fine-tune, e.g. gpt-4o-mini-2024-07-18 or (tinker) Qwen/Qwen3-8B')
    .addOption(
      new Option(
        '--method <method>',
        'sft: best transcripts; dpo: better/worse answer pairs per task (openai only: Tinker has no built-in DPO loss)',
      )
        .choices(['sft', 'dpo'])
        .makeOptionMandatory(),
    )
    .option('--min-reward <value>', 'sft: only rollouts whose final reward is at least this', numberFlag('min-reward'))
    .option('--agent <name>', 'only LLM calls made inside the agent with this agent.name')
    .option('--since <date>', 'only rollouts started since this ISO date or duration ago (7d, 12h)')
    .option('--suffix <text>', 'added to the tuned model name (up to 64 characters)')
    .option(
      '--wait',
      'follow the job to its end and publish the tuned model (else print the job id and return; tinker always waits)',
    )
    .option(
      '--base-url <url>',
      'provider endpoint (default: $OPENAI_BASE_URL, else api.openai.com; tinker: $TINKER_BASE_URL, else hosted Tinker)',
    )
    .option('--lora-rank <n>', 'tinker: LoRA rank (default 32)', numberFlag('lora-rank', { integer: true, min: 1 }))
    .option(
      '--steps <n>',
      'tinker: optimizer steps (default: --epochs passes)',
      numberFlag('steps', { integer: true, min: 1 }),
    )
    .option('--epochs <n>', 'tinker: passes over the data (default 1)', numberFlag('epochs', { integer: true, min: 1 }))
    .option('--learning-rate <x>', 'tinker: Adam learning rate (default 1e-4)', numberFlag('learning-rate', { min: 0 }))
    .option(
      '--save-every <n>',
      'tinker: save the training state every n steps so a rerun resumes (default 5)',
      numberFlag('save-every', { integer: true, min: 1 }),
    )
    .option(
      '--tokenizer <dir|package>',
      "tinker: the base model's tokenizer.json + tokenizer_config.json (default: built in)",
    )
    .option('--cancel-on-exit', 'cancel the provider job on Ctrl-C (default: leave it running; rerun to re-attach)')
    .option('--hyperparameters <json>', 'hyperparameters passed through, e.g. \'{"n_epochs":3}\'')
    .option('--n-epochs <n>', 'hyperparameter n_epochs', numberFlag('n-epochs', { integer: true, min: 1 }))
    .option(
      '--batch-size <n>',
      'hyperparameter batch_size (tinker: datums per step, default 8)',
      numberFlag('batch-size', { integer: true, min: 1 }),
    )
    .option(
      '--learning-rate-multiplier <x>',
      'hyperparameter learning_rate_multiplier',
      numberFlag('learning-rate-multiplier', { min: 0 }),
    )
    .option('--beta <x>', 'dpo hyperparameter beta', numberFlag('beta', { min: 0 }))
    .option('--llm-resource <name>', 'LLM resource to point at the tuned model (default: the first LLM resource)')
    .option('--poll-interval <seconds>', 'seconds between job polls', numberFlag('poll-interval', { min: 0 }), 10)
    .option('--json', 'print the result as JSON')
    .option('--no-redact', 'upload secrets found in the transcripts as they are (default: mask them, see SECURITY.md)')
    .option(
      '--release',
      'publish the tuned model as the candidate of a release against the latest (a share of live traffic at a time), not as the latest',
    );
  withReleaseFlags(cmd).action(async (flags: FinetuneFlags) => {
    requireReleaseFlag(flags);
    if (flags.release) releaseRequest(flags); // a bad release flag fails before any training
    const since = flags.since !== undefined ? parseSince(flags.since) : undefined;
    if (flags.provider === 'tinker') {
      const selection = {
        ...(flags.minReward !== undefined ? { minReward: flags.minReward } : {}),
        ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
        ...(since !== undefined ? { since } : {}),
      };
      const controller = new AbortController();
      const onSignal = (): void => {
        io.err('interrupted: saving the training state...');
        controller.abort();
      };
      await withCliStore(flags, async (store) => {
        process.once('SIGINT', onSignal);
        try {
          await runTinkerFinetune(store, flags, selection, io, controller.signal);
        } finally {
          process.removeListener('SIGINT', onSignal);
        }
      });
      return;
    }
    const hyperparameters = parseHyperparameters(flags);
    const client = await openAiClient(flags.baseUrl ?? (process.env.OPENAI_BASE_URL || undefined));
    const controller = new AbortController();
    const onSignal = (): void => {
      io.err(flags.cancelOnExit ? 'interrupted: cancelling the job...' : 'interrupted: leaving the job running...');
      controller.abort();
    };
    await withCliStore(flags, async (store) => {
      process.once('SIGINT', onSignal);
      try {
        const result = await fineTuneOpenAi({
          store,
          client,
          baseModel: flags.baseModel,
          method: flags.method,
          selection: {
            ...(flags.minReward !== undefined ? { minReward: flags.minReward } : {}),
            ...(flags.agent !== undefined ? { agent: flags.agent } : {}),
            ...(since !== undefined ? { since } : {}),
          },
          ...(flags.suffix !== undefined ? { suffix: flags.suffix } : {}),
          hyperparameters,
          wait: flags.wait === true,
          cancelOnExit: flags.cancelOnExit === true,
          signal: controller.signal,
          pollIntervalMs: flags.pollInterval * 1000,
          ...(flags.llmResource !== undefined ? { llmResourceName: flags.llmResource } : {}),
          onProgress: (line) => io.err(line),
          redact: flags.redact,
          ...(flags.release ? { publish: false } : {}),
        });
        if (flags.release && result.resources) {
          if (result.redaction) io.err(describeRedactionSummary(result.redaction));
          const release = await startCandidateRelease(store, result.resources, flags);
          return printCandidateRelease(io, release, flags.json);
        }
        if (flags.json) {
          io.out(JSON.stringify(result, null, 2));
          return;
        }
        if (result.redaction) io.out(describeRedactionSummary(result.redaction));
        if (result.published) {
          io.out(`fine_tuned_model=${result.fineTunedModel ?? ''}`);
          io.out(`resources_id=${result.published.resourcesId}`);
        } else {
          io.out(`job_id=${result.jobId}`);
          io.out(`status=${result.status}`);
          if (result.status !== 'detached')
            io.out('rerun the same command with --wait to follow the job and publish the tuned model');
        }
      } finally {
        process.removeListener('SIGINT', onSignal);
      }
    });
  });
  return cmd;
}
