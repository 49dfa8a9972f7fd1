import { Command, Option } from 'commander';
import { isAttemptedRollout, RolloutStatus, toWire, type Rollout, type RolloutMode } from '@agl/core';
import { NotFoundError } from '@agl/core/errors';
import type { LightningStore } from '@agl/core/store';
import { finalRewardOf } from '@agl/trainer';
import { parseChoices } from './flag-values';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';
import { isoTime, processIo, table, type CliIo } from './output';

/** A reward for the table: up to 3 decimals, no trailing zeros. */
function formatReward(value: number): string {
  return String(Number(value.toFixed(3)));
}

async function requireRollout(store: LightningStore, id: string): Promise<Rollout> {
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

  storeCommand(
    'list',
    "list rollouts (newest first) with the final reward of each one's latest attempt",
    (c) =>
      c
        .option('--status <statuses>', `filter by status, comma-separated (${RolloutStatus.options.join(', ')})`)
        .addOption(new Option('--mode <mode>', 'filter by mode').choices(['train', 'val', 'test']))
        .option('--limit <n>', 'maximum rows', (v) => Number.parseInt(v, 10), 50)
        .option('--json', 'print JSON (wire format) instead of a table'),
    cmd,
  ).action(async (opts: StoreFlags & { status?: string; mode?: string; limit: number; json?: boolean }) => {
    await withCliStore(opts, async (store) => {
      const statusIn = parseChoices(opts.status, RolloutStatus.options, 'status');
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
    });
  });

  storeCommand('show', 'show one rollout with its attempts', (c) => c.argument('<rolloutId>'), cmd).action(
    async (id: string, opts: StoreFlags) => {
      await withCliStore(opts, async (store) => {
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
      });
    },
  );

  storeCommand('cancel', 'cancel a rollout', (c) => c.argument('<rolloutId>'), cmd).action(
    async (id: string, opts: StoreFlags) => {
      await withCliStore(opts, async (store) => {
        await requireRollout(store, id);
        const updated = await store.updateRollout(id, { status: 'cancelled' });
        io.out(`${updated.rolloutId} ${updated.status}`);
      });
    },
  );

  storeCommand(
    'requeue',
    'put a rollout back in the queue for another attempt',
    (c) => c.argument('<rolloutId>'),
    cmd,
  ).action(async (id: string, opts: StoreFlags) => {
    await withCliStore(opts, async (store) => {
      await requireRollout(store, id);
      const updated = await store.updateRollout(id, { status: 'requeuing' });
      io.out(`${updated.rolloutId} ${updated.status}`);
    });
  });
  return cmd;
}
