import { Command } from 'commander';
import type { LightningStore } from '@agl/core/store';
import { UserError } from '@agl/core/errors';
import { RolloutStatus, type RolloutMode } from '@agl/core/schema';
import type { TrajectoryFilter } from '@agl/trainer/export';
import { list, parseChoices } from './flag-values';
import { withCliStore, withStoreFlags, type StoreFlags } from './store-options';

/** Flags shared by `agl export verl|sft|dpo`. */
export interface ExportFilterFlags extends StoreFlags {
  out: string;
  mode?: string;
  resourcesId?: string;
  agentMatch?: string;
  status?: string;
  json?: boolean;
  /** `--no-redact` sets it false; secrets are masked by default. */
  redact: boolean;
}

const MODES = ['train', 'val', 'test'] as const;

/**
 * A new `agl export <name>` subcommand with the store flags, the rollout filters (`--mode`, `--resources-id`,
 * `--agent-match`, `--status`, `--json`), `--no-redact` and the required `--out` (`outFlag`, e.g. `--out <file>`, described by
 * `outHelp`), in that order.
 */
export function exportSubcommand(
  name: string,
  description: string,
  o: { defaultStatus: string; outFlag: string; outHelp: string },
): Command {
  return withStoreFlags(new Command(name).description(description))
    .option('--mode <modes>', 'rollout modes to export, comma-separated (train, val, test); default every mode')
    .option(
      '--resources-id <ids>',
      'only rollouts that ran with these resources ids (comma-separated; `latest` = the newest)',
    )
    .option(
      '--agent-match <regex>',
      'only LLM calls made inside an agent whose `agent.name` matches this regular expression',
    )
    .option('--status <statuses>', `rollout statuses to export, comma-separated (default ${o.defaultStatus})`)
    .option('--json', 'print the export counters as JSON')
    .option('--no-redact', 'write secrets found in the data as they are (default: mask them, see SECURITY.md)')
    .requiredOption(o.outFlag, o.outHelp);
}

/**
 * The action of an `agl export` subcommand: the filter flags are checked before any store opens, then `run` gets the
 * selected store (closed afterwards), the filter and the flags.
 */
export function exportAction<F extends ExportFilterFlags>(
  run: (store: LightningStore, filter: TrajectoryFilter, flags: F) => Promise<void>,
): (flags: F) => Promise<void> {
  return async (flags) => {
    const filter = parseExportFilter(flags);
    await withCliStore(flags, (store) => run(store, filter, flags));
  };
}

/** A `--status` value (comma-separated rollout statuses); throws a UserError naming the bad one. */
export function parseStatuses(value: string | undefined): RolloutStatus[] | undefined {
  return parseChoices(value, RolloutStatus.options, 'status');
}

/** Turns the flags into a `TrajectoryFilter`, naming the flag and the fix on bad input. */
export function parseExportFilter(flags: ExportFilterFlags): TrajectoryFilter {
  const filter: TrajectoryFilter = {};
  const modes = parseChoices<NonNullable<RolloutMode>>(flags.mode, MODES, 'mode');
  if (modes) filter.modeIn = modes;
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
