import { Command, Option } from 'commander';
import { isAttemptedRollout, RolloutStatus, toWire, type Rollout, type RolloutMode } from '@agl/core';
import { NotFoundError, UserError } from '@agl/core/errors';
import { finalRewardOf } from '@agl/trainer';
import { openCliStore, withStoreFlags, type StoreFlags } from './store-options';
import { isoTime, processIo, table, type CliIo } from './output';

function parseList<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T[] | undefined {
  if (!value) return undefined;
  const items = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const item of items) {
    if (!allowed.includes(item as T))
      throw new UserError(
        `--${flag} got ${JSON.stringify(item)}; use one or more of ${allowed.join(', ')} (comma-separated).`,
      );
  }
  return items as T[];
}

/** A reward for the table: up to 3 decimals, no trailing zeros. */
function formatReward(value: number): string {
  return String(Number(value.toFixed(3)));
}

async function requireRollout(store: Awaited<ReturnType<typeof openCliStore>>['store'], id: string): Promise<Rollout> {
  const rollout = await store.getRolloutById(id);
  if (!rollout)
    throw new NotFoundError(
      'rollout',
      id,
      `No rollout ${JSON.stringify(id)} in this store; list them with \`agl rollouts list\`.`,
    );
  return rollout;
}

/** `agl rollouts list|show|cancel|requeue`. */
export function rolloutsCommand(io: CliIo = processIo): Command {
  const cmd = new Command('rollouts').description('inspect and manage rollouts in a store');

  withStoreFlags(
    cmd
      .command('list')
      .description("list rollouts (newest first) with the final reward of each one's latest attempt")
      .option('--status <statuses>', `filter by status, comma-separated (${RolloutStatus.options.join(', ')})`)
      .addOption(new Option('--mode <mode>', 'filter by mode').choices(['train', 'val', 'test']))
      .option('--limit <n>', 'maximum rows', (v) => Number.parseInt(v, 10), 50)
      .option('--json', 'print JSON (wire format) instead of a table'),
  ).action(async (opts: StoreFlags & { status?: string; mode?: string; limit: number; json?: boolean }) => {
    const { store, close } = await openCliStore(opts);
    try {
      const statusIn = parseList(opts.status, RolloutStatus.options, 'status');
      const page = await store.queryRollouts({
        statusIn,
        modeIn: opts.mode ? [opts.mode as NonNullable<RolloutMode>] : undefined,
        limit: opts.limit,
        sortBy: 'startTime',
        sortOrder: 'desc',
      });
      if (opts.json)
        return io.out(
          JSON.stringify({ items: page.items.map((r) => toWire('rollout', r)), total: page.total }, null, 2),
        );
      const rewards = await Promise.all(page.items.map((r) => finalRewardOf(store, r.rolloutId)));
      const rows = page.items.map((r, i) => [
        r.rolloutId,
        r.status,
        r.mode ?? '-',
        rewards[i] === null ? '-' : formatReward(rewards[i]!),
        isAttemptedRollout(r) ? String(r.attempt.sequenceId) : '-',
        isoTime(r.startTime),
        isoTime(r.endTime),
      ]);
      io.out(table(['ROLLOUT', 'STATUS', 'MODE', 'REWARD', 'ATTEMPTS', 'STARTED', 'ENDED'], rows));
      io.out(`${page.items.length} of ${page.total} rollouts`);
    } finally {
      await close();
    }
  });

  withStoreFlags(cmd.command('show').description('show one rollout with its attempts').argument('<rolloutId>')).action(
    async (id: string, opts: StoreFlags) => {
      const { store, close } = await openCliStore(opts);
      try {
        const rollout = await requireRollout(store, id);
        const attempts = (await store.queryAttempts({ rolloutId: id })).items;
        const spans = await store.querySpans({ rolloutId: id, limit: 0 });
        io.out(
          JSON.stringify(
            {
              rollout: toWire('rollout', rollout),
              attempts: attempts.map((a) => toWire('attempt', a)),
              span_count: spans.total,
            },
            null,
            2,
          ),
        );
      } finally {
        await close();
      }
    },
  );

  withStoreFlags(cmd.command('cancel').description('cancel a rollout').argument('<rolloutId>')).action(
    async (id: string, opts: StoreFlags) => {
      const { store, close } = await openCliStore(opts);
      try {
        await requireRollout(store, id);
        const updated = await store.updateRollout(id, { status: 'cancelled' });
        io.out(`${updated.rolloutId} ${updated.status}`);
      } finally {
        await close();
      }
    },
  );

  withStoreFlags(
    cmd.command('requeue').description('put a rollout back in the queue for another attempt').argument('<rolloutId>'),
  ).action(async (id: string, opts: StoreFlags) => {
    const { store, close } = await openCliStore(opts);
    try {
      await requireRollout(store, id);
      const updated = await store.updateRollout(id, { status: 'requeuing' });
      io.out(`${updated.rolloutId} ${updated.status}`);
    } finally {
      await close();
    }
  });
  return cmd;
}
