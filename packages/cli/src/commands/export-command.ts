import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { once } from 'node:events';
import { Command, Option } from 'commander';
import { type Rollout, type RolloutMode, type Trajectory } from '@agl/core';
import { TraceToTransitions } from '@agl/core/transitions';
import { parseStatuses } from './export-filter-flags';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';
import { processIo, type CliIo } from './output';
import { exportVerlCommand } from './export-verl';
import { exportSftCommand } from './export-sft';
import { exportDpoCommand } from './export-dpo';
import { describeRedactionSummary, redactionSummary, trainingDataRedaction } from '@agl/trainer/export';

interface ExportFlags extends StoreFlags {
  out: string;
  status: string;
  mode?: string;
  agentMatch?: string;
  rollout?: string[];
  redact: boolean;
}

/** One JSONL row of `agl export transitions`: a transition with its trajectory's identity (snake_case). */
export function transitionRows(trajectory: Trajectory): Record<string, unknown>[] {
  return trajectory.transitions.map((t, index) => ({
    rollout_id: trajectory.rolloutId,
    attempt_id: trajectory.attemptId,
    task_id: trajectory.taskId,
    mode: trajectory.mode,
    index,
    agent_name: t.agentName,
    state: { messages: t.state.messages, token_ids: t.state.tokenIds ?? null },
    action: { message: t.action.message, token_ids: t.action.tokenIds ?? null, logprobs: t.action.logprobs ?? null },
    reward: t.reward,
    done: t.done,
    final_reward: trajectory.finalReward,
    span_ids: t.spanIds,
    response_id: t.responseId ?? null,
  }));
}

/** `agl export transitions`: every matching rollout's latest attempt through `TraceToTransitions`, as JSONL. */
export function exportCommand(io: CliIo = processIo): Command {
  const cmd = new Command('export').description('export training data from a store');
  storeCommand(
    'transitions',
    'write one JSON line per transition (state, action, reward) of the latest attempt of each rollout',
    (c) =>
      c
        .requiredOption('--out <file>', 'output .jsonl file')
        .option('--status <statuses>', 'rollout statuses to export, comma-separated', 'succeeded,failed')
        .addOption(new Option('--mode <mode>', 'only rollouts of this mode').choices(['train', 'val', 'test']))
        .option('--agent-match <regex>', 'only LLM calls made inside agents whose name matches')
        .option('--rollout <ids...>', 'only these rollout ids')
        .option('--no-redact', 'write secrets found in the data as they are (default: mask them, see SECURITY.md)'),
    cmd,
  ).action(async (opts: ExportFlags) => {
    const out = resolve(opts.out);
    const redaction = trainingDataRedaction(opts.redact);
    await withCliStore(opts, async (store) => {
      const page = await store.queryRollouts({
        statusIn: parseStatuses(opts.status),
        modeIn: opts.mode ? [opts.mode as NonNullable<RolloutMode>] : undefined,
        rolloutIdIn: opts.rollout ?? undefined,
        sortBy: 'startTime',
        sortOrder: 'asc',
      });
      const adapter = new TraceToTransitions({ agentMatch: opts.agentMatch ? new RegExp(opts.agentMatch, 'u') : null });
      await mkdir(dirname(out), { recursive: true });
      const file = createWriteStream(out, { encoding: 'utf8' });
      let rows = 0;
      for (const rollout of page.items as Rollout[]) {
        const stored = (
          await store.querySpans({ rolloutId: rollout.rolloutId, attemptId: 'latest', sortBy: 'sequenceId' })
        ).items;
        const spans = redaction ? redaction.spans(stored) : stored;
        for (const row of transitionRows(adapter.adapt(spans, rollout))) {
          if (!file.write(`${JSON.stringify(row)}\n`)) await once(file, 'drain');
          rows += 1;
        }
      }
      file.end();
      await once(file, 'close');
      io.out(`wrote ${rows} transitions from ${page.items.length} rollouts to ${out}`);
      io.out(describeRedactionSummary(redactionSummary(redaction)));
    });
  });
  cmd.addCommand(exportVerlCommand(io));
  cmd.addCommand(exportSftCommand(io));
  cmd.addCommand(exportDpoCommand(io));
  return cmd;
}
