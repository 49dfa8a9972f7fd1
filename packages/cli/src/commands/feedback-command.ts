import type { Command } from 'commander';
import { toWire } from '@agl/core/schema';
import { UserError } from '@agl/core/errors';
import { recordFeedback, type FeedbackOptions } from '@agl/core/store';
import { StoreClient } from '@agl/store/client';
import { finiteNumber } from './flag-values';
import { processIo, type CliIo } from './output';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';

const REWARD_EXAMPLE = 'e.g. 1 for a thumbs-up, 0 for a thumbs-down';

interface FeedbackFlags extends StoreFlags {
  comment?: string;
  dimension: string[];
  json?: boolean;
}

function collectDimension(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `name=value` pairs of `--dimension` as a record. */
function parseDimensions(pairs: readonly string[]): Record<string, number> | undefined {
  if (pairs.length === 0) return undefined;
  const out: Record<string, number> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const name = at < 0 ? '' : pair.slice(0, at).trim();
    if (name === '')
      throw new UserError(
        `--dimension got ${JSON.stringify(pair)}; write it as name=value, e.g. --dimension helpful=1.`,
      );
    out[name] = finiteNumber(pair.slice(at + 1), `--dimension ${name}`, REWARD_EXAMPLE);
  }
  return out;
}

/** `agl feedback <rolloutId> <reward>`: a user's late reward for a rollout; it becomes the rollout's final reward. */
export function feedbackCommand(io: CliIo = processIo): Command {
  return storeCommand(
    'feedback',
    "record a user's feedback on a rollout; the latest feedback is the rollout's final reward",
    (c) =>
      c
        .argument('<rolloutId>', 'the rollout (x-agl-rollout-id of the response, or `agl rollouts list`)')
        .argument('<reward>', 'the score, e.g. 1 (thumbs-up) or 0 (thumbs-down)')
        .option('--comment <text>', "the user's comment, kept with the score")
        .option('--dimension <name=value>', 'a further named score (repeatable)', collectDimension, [])
        .option('--json', 'print the stored feedback span (wire format)'),
  ).action(async (rolloutId: string, rewardText: string, flags: FeedbackFlags) => {
    const reward = finiteNumber(rewardText, 'The reward', REWARD_EXAMPLE);
    const dimensions = parseDimensions(flags.dimension);
    const options: FeedbackOptions = {
      ...(flags.comment !== undefined ? { comment: flags.comment } : {}),
      ...(dimensions ? { dimensions } : {}),
    };
    await withCliStore(flags, async (store) => {
      // A served store records it in one request (the server's feedback route); any other store directly.
      const span =
        store instanceof StoreClient
          ? await store.addFeedback(rolloutId, reward, options)
          : await recordFeedback(store, rolloutId, reward, options);
      if (flags.json) return io.out(JSON.stringify(toWire('span', span), null, 2));
      io.out(`feedback ${reward} recorded on rollout ${rolloutId} (span ${span.spanId}, sequence ${span.sequenceId})`);
    });
  });
}
