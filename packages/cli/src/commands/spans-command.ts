import type { Command } from 'commander';
import { toWire } from '@agl/core';
import { getRewardValue } from '@agl/core/transitions';
import { UserError } from '@agl/core/errors';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';
import { processIo, table, type CliIo } from './output';

/** `agl spans <rolloutId>`: the spans of a rollout (latest attempt by default); `latest` is the newest rollout. */
export function spansCommand(io: CliIo = processIo): Command {
  return storeCommand('spans', "list a rollout's spans in sequence order", (c) =>
    c
      .argument('<rolloutId>', "a rollout id, or 'latest' for the newest rollout")
      .option('--attempt <attemptId>', "an attempt id, 'latest' (default) or 'all'", 'latest')
      .option('--json', 'print the spans as JSON (wire format)'),
  ).action(async (rolloutId: string, opts: StoreFlags & { attempt: string; json?: boolean }) => {
    await withCliStore(opts, async (store) => {
      if (rolloutId === 'latest') {
        const newest = (await store.queryRollouts({ sortBy: 'startTime', sortOrder: 'desc', limit: 1 })).items[0];
        if (!newest)
          throw new UserError('This store has no rollout yet; run an agent first (Trainer.dev / agl train).');
        rolloutId = newest.rolloutId;
        if (!opts.json) io.out(`rollout ${rolloutId}`);
      }
      const page = await store.querySpans({
        rolloutId,
        attemptId: opts.attempt === 'all' ? null : opts.attempt,
        sortBy: 'sequenceId',
        sortOrder: 'asc',
      });
      if (opts.json)
        return io.out(
          JSON.stringify(
            page.items.map((s) => toWire('span', s)),
            null,
            2,
          ),
        );
      const rows = page.items.map((s) => {
        const reward = getRewardValue(s);
        const duration =
          s.startTime != null && s.endTime != null ? `${((s.endTime - s.startTime) * 1000).toFixed(1)}ms` : '-';
        return [
          String(s.sequenceId),
          s.name,
          s.spanId,
          s.parentId ?? '-',
          duration,
          reward === null ? '' : `reward=${reward}`,
        ];
      });
      io.out(table(['SEQ', 'NAME', 'SPAN', 'PARENT', 'DURATION', 'NOTE'], rows));
      io.out(`${page.items.length} spans`);
    });
  });
}
