import type { Command } from 'commander';
import { UserError } from '@agl/core/errors';
import { RolloutStatus, type RolloutMode } from '@agl/core/schema';
import type { TrajectoryFilter } from '@agl/trainer/export';
import { withStoreFlags, type StoreFlags } from './store-options';

/** Flags shared by `agl export verl|sft|dpo`. */
export interface ExportFilterFlags extends StoreFlags {
  mode?: string;
  resourcesId?: string;
  agentMatch?: string;
  status?: string;
  json?: boolean;
}

const MODES = ['train', 'val', 'test'] as const;

/** A comma-separated flag value as a list (`undefined` when absent or empty). */
export function list(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}

/** Adds the store flags and the rollout filters (`--mode`, `--resources-id`, `--agent-match`, `--status`, `--json`). */
export function withExportFilterFlags(cmd: Command, defaultStatus: string): Command {
  return withStoreFlags(cmd)
    .option('--mode <modes>', 'rollout modes to export, comma-separated (train, val, test); default every mode')
    .option(
      '--resources-id <ids>',
      'only rollouts that ran with these resources ids (comma-separated; `latest` = the newest)',
    )
    .option(
      '--agent-match <regex>',
      'only LLM calls made inside an agent whose `agent.name` matches this regular expression',
    )
    .option('--status <statuses>', `rollout statuses to export, comma-separated (default ${defaultStatus})`)
    .option('--json', 'print the export counters as JSON');
}

/** A `--status` value (comma-separated rollout statuses); throws a UserError naming the bad one. */
export function parseStatuses(value: string | undefined): RolloutStatus[] | undefined {
  const statuses = list(value);
  for (const s of statuses ?? []) {
    if (!(RolloutStatus.options as readonly string[]).includes(s)) {
      throw new UserError(
        `--status got ${JSON.stringify(s)}; use one or more of ${RolloutStatus.options.join(', ')} (comma-separated).`,
      );
    }
  }
  return statuses as RolloutStatus[] | undefined;
}

/** Turns the flags into a `TrajectoryFilter`, naming the flag and the fix on bad input. */
export function parseExportFilter(flags: ExportFilterFlags): TrajectoryFilter {
  const filter: TrajectoryFilter = {};
  const modes = list(flags.mode);
  if (modes) {
    for (const m of modes) {
      if (!(MODES as readonly string[]).includes(m)) {
        throw new UserError(
          `--mode got ${JSON.stringify(m)}; use one or more of ${MODES.join(', ')} (comma-separated).`,
        );
      }
    }
    filter.modeIn = modes as Array<NonNullable<RolloutMode>>;
  }
  const statuses = parseStatuses(flags.status);
  if (statuses) filter.statusIn = statuses;
  const resources = list(flags.resourcesId);
  if (resources) filter.resourcesIdIn = resources;
  if (flags.agentMatch !== undefined) {
    try {
      filter.agentMatch = new RegExp(flags.agentMatch);
    } catch (error) {
      throw new UserError(
        `--agent-match ${JSON.stringify(flags.agentMatch)} is not a valid regular expression (${(error as Error).message}); ` +
          'escape special characters, e.g. --agent-match "^calc$"',
      );
    }
  }
  return filter;
}

/** Parses a number flag; throws a UserError naming the flag. */
export function numberFlag(flag: string, options: { integer?: boolean; min?: number; max?: number } = {}) {
  return (value: string): number => {
    const n = Number(value);
    const ok =
      value.trim() !== '' &&
      Number.isFinite(n) &&
      (!options.integer || Number.isInteger(n)) &&
      (options.min === undefined || n >= options.min) &&
      (options.max === undefined || n <= options.max);
    if (!ok) {
      const kind = options.integer ? 'an integer' : 'a number';
      const range = [
        options.min !== undefined ? `≥ ${options.min}` : '',
        options.max !== undefined ? `≤ ${options.max}` : '',
      ]
        .filter(Boolean)
        .join(' and ');
      throw new UserError(`--${flag} got ${JSON.stringify(value)}; pass ${kind}${range ? ` ${range}` : ''}.`);
    }
    return n;
  };
}
