import { type Command, InvalidArgumentError } from 'commander';
import { UserError } from '@agl/core/errors';
import { backupStore, exportStore, importStore, pruneStore } from '@agl/store/ops';
import { DEFAULT_STORE_PATH } from '@agl/trainer';
import { processIo, type CliIo } from './output';

const DB_HELP = 'the store: a SQLite file or a postgres:// URL (?schema=name selects the schema)';

function parseCount(value: string): number {
  if (!/^\d+$/.test(value)) throw new InvalidArgumentError('use a whole number ≥ 0.');
  return Number(value);
}

function parseDate(value: string): Date {
  const date = new Date(/^\d+(\.\d+)?$/.test(value) ? Number(value) * 1000 : value);
  if (Number.isNaN(date.getTime()))
    throw new InvalidArgumentError('use an ISO date (2026-01-31, 2026-01-31T12:00:00Z) or epoch seconds.');
  return date;
}

/** A `agl store <name>` subcommand on the store `--db` names (`dbHelp` describes it). */
function dbCommand(cmd: Command, name: string, description: string, dbHelp = DB_HELP): Command {
  return cmd.command(name).description(description).option('--db <path|url>', dbHelp, DEFAULT_STORE_PATH);
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `2 rollouts, 2 attempts, 5 spans`. */
const rolloutCounts = (c: { rollouts: number; attempts: number; spans: number }): string =>
  `${plural(c.rollouts, 'rollout')}, ${plural(c.attempts, 'attempt')}, ${plural(c.spans, 'span')}`;

/** `agl store export|import|prune|backup`: offline operations for long runs, on SQLite files and PostgreSQL. */
export function addStoreOpsCommands(cmd: Command, io: CliIo = processIo): void {
  dbCommand(
    cmd,
    'export',
    'write the whole store to a portable JSON Lines dump (any backend; loads with `agl store import`)',
  )
    .requiredOption('--out <file>', 'dump file to write (.jsonl)')
    .action(async (opts: { db: string; out: string }) => {
      const c = await exportStore({ db: opts.db, out: opts.out });
      io.out(
        `exported ${rolloutCounts(c)}, ` +
          `${plural(c.resources, 'resource version')}, ${plural(c.workers, 'worker')} to ${opts.out}`,
      );
    });

  dbCommand(
    cmd,
    'import',
    'load a dump into an empty store, in one transaction (e.g. SQLite → PostgreSQL migration)',
    `${DB_HELP}; must be empty`,
  )
    .requiredOption('--in <file>', 'dump written by `agl store export`')
    .action(async (opts: { db: string; in: string }) => {
      const c = await importStore({ db: opts.db, in: opts.in });
      io.out(
        `imported ${rolloutCounts(c)}, ` +
          `${plural(c.resources, 'resource version')}, ${plural(c.workers, 'worker')} (${c.queued} queued)`,
      );
    });

  dbCommand(
    cmd,
    'prune',
    'retention: delete finished rollouts (with their attempts and spans); queued and running ones stay',
  )
    .option('--before <date>', 'delete finished rollouts that ended before this date', parseDate)
    .option('--keep-last <n>', 'keep the newest n rollouts, delete older finished ones', parseCount)
    .option('--dry-run', 'only count what would be deleted')
    .action(async (opts: { db: string; before?: Date; keepLast?: number; dryRun?: boolean }) => {
      if ((opts.before === undefined) === (opts.keepLast === undefined)) {
        throw new UserError('agl store prune needs exactly one of --before <date> or --keep-last <n>.');
      }
      const r = await pruneStore({ db: opts.db, before: opts.before, keepLast: opts.keepLast, dryRun: opts.dryRun });
      io.out(`${opts.dryRun ? 'would delete' : 'deleted'} ${rolloutCounts(r)}`);
    });

  dbCommand(
    cmd,
    'backup',
    'SQLite: an online backup (safe while servers write); PostgreSQL: prints the pg_dump commands',
  )
    .requiredOption('--out <file>', 'backup file to write (never overwritten)')
    .action(async (opts: { db: string; out: string }) => {
      const r = await backupStore({ db: opts.db, out: opts.out });
      if (r.kind === 'postgres') io.out(r.guidance);
      else io.out(`backed up ${opts.db} to ${r.out} (${r.pages} pages)`);
    });
}
