import type { AgentMatch } from '@agl/core/transitions';
import type { LightningStore } from '@agl/core/store';
import { toDpoPairs, type DpoRecord, type DpoStats } from '../export/dpo-pairs';
import { loadTrajectories } from '../export/load-trajectories';
import { toSftRecords, type SftRecord, type SftStats } from '../export/sft-records';
import type { FineTuningMethod } from './validate-fine-tuning-records';
import {
  redactFineTuningRecords,
  redactionSummary,
  trainingDataRedaction,
  type RedactionSummary,
  type RedactOption,
} from '../export/training-data-redaction';

/** Which stored rollouts become training data. */
export interface FineTuningSelection {
  /** `sft`: transcripts of rollouts at or above this final reward. `dpo`: unused. */
  minReward?: number;
  /** Only calls made inside this agent (`agent.name`). */
  agent?: AgentMatch;
  /** Only rollouts started at or after this time (seconds since the epoch). */
  since?: number;
  /** Only these rollouts. */
  rolloutIds?: readonly string[];
}

/** Training lines and their counters. */
export interface FineTuningData {
  records: SftRecord[] | DpoRecord[];
  nRollouts: number;
  stats: SftStats | DpoStats;
  /** What redaction masked before the lines were built (every provider uploads these lines). */
  redaction: RedactionSummary;
}

/**
 * Store → OpenAI fine-tuning lines, through the same code as `agl export sft|dpo`: `sft` = one chat transcript
 * (`{messages, tools?}`, tool calls included) per succeeded rollout at or above `minReward`; `dpo` = the best and the
 * worst answer to the same prompt per task (task id: `metadata.task_id`, else the input's hash).
 *
 * Secrets are masked (default on; `redact: false` = `--no-redact`) in the spans read and in the finished lines, so
 * every provider that uploads these lines (OpenAI, Tinker) uploads no secret in clear; `redaction` counts them.
 */
export async function buildFineTuningData(options: {
  store: LightningStore;
  method: FineTuningMethod;
  selection?: FineTuningSelection;
  redact?: RedactOption;
}): Promise<FineTuningData> {
  const { store, method, selection = {} } = options;
  const redaction = trainingDataRedaction(options.redact);
  if (selection.rolloutIds?.length === 0)
    return { records: [], nRollouts: 0, stats: emptyStats(method), redaction: redactionSummary(redaction) };
  const loaded = await loadTrajectories({
    redaction,
    store,
    filter: {
      statusIn: method === 'sft' ? ['succeeded'] : ['succeeded', 'failed'],
      ...(selection.agent !== undefined ? { agentMatch: selection.agent } : {}),
      ...(selection.since !== undefined ? { startedAfter: selection.since } : {}),
      ...(selection.rolloutIds ? { rolloutIdIn: [...selection.rolloutIds] } : {}),
    },
  });
  const built =
    method === 'sft'
      ? toSftRecords({
          trajectories: loaded.trajectories,
          toolsOf: loaded.toolsOf,
          ...(selection.minReward !== undefined ? { minReward: selection.minReward } : {}),
        })
      : toDpoPairs({ trajectories: loaded.trajectories, toolsOf: loaded.toolsOf });
  const records = redactFineTuningRecords(built.records as Array<SftRecord | DpoRecord>, redaction) as
    SftRecord[] | DpoRecord[];
  return { records, nRollouts: loaded.nRollouts, stats: built.stats, redaction: redactionSummary(redaction) };
}

function emptyStats(method: FineTuningMethod): SftStats | DpoStats {
  return method === 'sft' ? toSftRecords({ trajectories: [] }).stats : toDpoPairs({ trajectories: [] }).stats;
}
