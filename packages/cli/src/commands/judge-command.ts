import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import {
  ChatClient,
  FileJudgeCache,
  judgeAgreement,
  judgeStore,
  LlmJudge,
  rubricHash,
  type JudgeStoreReport,
} from '@agl/apo';
import { UserError } from '@agl/core/errors';
import { parseTimeBound } from '@agl/trainer';
import { numberFlag } from './flag-values';
import { processIo, type CliIo } from './output';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';

interface JudgeFlags extends StoreFlags {
  rubric?: string;
  model?: string;
  baseUrl?: string;
  onlyUnrewarded?: boolean;
  since?: string;
  until?: string;
  groupBy?: 'task';
  concurrency: number;
  maxTokens?: number;
  budget?: number;
  price?: string;
  cache: string | false;
  agreement?: boolean;
  threshold: number;
  json?: boolean;
}

/** The default cache file of judge answers (see the CLI README). */
export const DEFAULT_JUDGE_CACHE = '.agl/judge-cache.jsonl';

function pricing(flags: JudgeFlags): { inputPerMillion: number; outputPerMillion: number } | undefined {
  if (flags.price === undefined) {
    if (flags.budget !== undefined)
      throw new UserError(
        '--budget needs --price <input,output> (USD per million tokens) to count the cost, e.g. --price 0.4,1.6.',
      );
    return undefined;
  }
  const [input, output, ...rest] = flags.price.split(',').map((s) => Number(s.trim()));
  if (rest.length > 0 || !(Number.isFinite(input) && input! >= 0 && Number.isFinite(output) && output! >= 0))
    throw new UserError(
      `--price got ${JSON.stringify(flags.price)}; pass USD per million input,output tokens, e.g. --price 0.4,1.6.`,
    );
  return { inputPerMillion: input!, outputPerMillion: output! };
}

async function readRubric(path: string): Promise<string> {
  try {
    return await readFile(resolve(path), 'utf8');
  } catch (err) {
    throw new UserError(
      `Cannot read the rubric ${resolve(path)}: ${(err as Error).message}. Pass --rubric <file.md>.`,
      {
        cause: err,
      },
    );
  }
}

function summary(report: JudgeStoreReport): string[] {
  const lines = [
    `judged ${report.judged} rollouts (${report.cached} from the cache) of ${report.rollouts}; skipped ${report.alreadyJudged} already judged, ${report.rewarded} with a reward`,
    `${report.usage.calls} judge calls, ${report.usage.promptTokens + report.usage.completionTokens} tokens, $${report.usage.costUsd.toFixed(4)}`,
  ];
  for (const f of report.failures) lines.push(`judge failure on ${f.rolloutIds.join(', ')}: ${f.message}`);
  return lines;
}

/**
 * `agl judge`: score a store's rollouts with an LLM judge against a rubric (reward spans with `agl.reward.source =
 * 'judge'`), or with `--agreement` compare the judge's scores with user feedback.
 */
export function judgeCommand(io: CliIo = processIo): Command {
  return storeCommand(
    'judge',
    'score rollouts with an LLM judge against a rubric, or report its agreement with user feedback',
    (c) =>
      c
        .option('--rubric <file>', 'the rubric (markdown or text) the judge scores against')
        .option('--model <model>', 'the judge model (any OpenAI-compatible chat model with structured output)')
        .option('--base-url <url>', 'OpenAI-compatible endpoint including /v1 (default: $OPENAI_BASE_URL, else OpenAI)')
        .option('--only-unrewarded', 'only rollouts without a reward (no feedback, agent reward or judge score)')
        .option('--since <time>', 'rollouts started at or after: an ISO date or a time ago (30m, 12h, 7d, 2w)')
        .option('--until <time>', 'rollouts started before: an ISO date or a time ago')
        .addOption(
          new Option('--group-by <key>', 'judge the rollouts of one task together (group mode)').choices(['task']),
        )
        .option('--concurrency <n>', 'judge calls in flight', numberFlag('concurrency', { integer: true, min: 1 }), 4)
        .option(
          '--max-tokens <n>',
          'token budget: stop once this many tokens are spent',
          numberFlag('max-tokens', { integer: true, min: 1 }),
        )
        .option('--budget <usd>', 'cost budget in USD (needs --price)', numberFlag('budget', { min: 0 }))
        .option('--price <input,output>', 'USD per million input and output tokens, e.g. 0.4,1.6')
        .option('--cache <file>', 'cache of judge answers (JSONL)', DEFAULT_JUDGE_CACHE)
        .option('--no-cache', 'no cache file (every transcript is judged again)')
        .option('--agreement', 'report Spearman rho and accuracy between judge scores and user feedback')
        .option(
          '--threshold <r>',
          'with --agreement: the positive / negative cut for accuracy',
          numberFlag('threshold'),
          0.5,
        )
        .option('--json', 'print the report as JSON'),
  ).action(async (flags: JudgeFlags) => {
    const now = Date.now() / 1000;
    const since = flags.since === undefined ? undefined : parseTimeBound(flags.since, now, 'since');
    const until = flags.until === undefined ? undefined : parseTimeBound(flags.until, now, 'until');
    if (flags.agreement) {
      const hash = flags.rubric === undefined ? undefined : rubricHash(await readRubric(flags.rubric));
      await withCliStore(flags, async (store) => {
        const r = await judgeAgreement(store, {
          threshold: flags.threshold,
          model: flags.model,
          rubricHash: hash,
          since,
          until,
        });
        if (flags.json)
          io.out(JSON.stringify({ pairs: r.pairs, rho: r.rho, accuracy: r.accuracy, threshold: r.threshold }));
        else if (r.pairs === 0) io.out('no rollout has both a judge score and user feedback yet');
        else
          io.out(
            `${r.pairs} rollouts with a judge score and feedback: Spearman rho ${r.rho === null ? 'undefined (no spread)' : r.rho.toFixed(3)}, accuracy ${(r.accuracy! * 100).toFixed(1)}% at threshold ${r.threshold}`,
          );
      });
      return;
    }
    if (flags.rubric === undefined || flags.model === undefined)
      throw new UserError(
        'agl judge needs --rubric <file.md> and --model <model> (or --agreement to compare with feedback).',
      );
    const rubric = await readRubric(flags.rubric);
    const baseURL = flags.baseUrl ?? (process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1');
    const client = new ChatClient({
      baseURL,
      apiKey: process.env.OPENAI_API_KEY || undefined,
      maxConcurrency: flags.concurrency,
      maxTotalTokens: flags.maxTokens,
      maxCostUsd: flags.budget,
      pricing: pricing(flags),
    });
    const cache = flags.cache === false ? undefined : new FileJudgeCache(flags.cache);
    const judge = new LlmJudge({ client, model: flags.model, rubric, cache });
    await withCliStore(flags, async (store) => {
      const report = await judgeStore(store, judge, {
        onlyUnrewarded: flags.onlyUnrewarded,
        since,
        until,
        groupBy: flags.groupBy ?? null,
        concurrency: flags.concurrency,
      });
      if (flags.json) io.out(JSON.stringify({ ...report, rubric_hash: judge.rubricHash }));
      else for (const line of summary(report)) io.out(line);
      if (report.budgetExhausted)
        io.err(`agl judge stopped: ${report.budgetExhausted} ${report.notJudged} rollouts were not judged.`);
    });
  });
}
