import { Command } from 'commander';
import { NotFoundError, UserError } from '@agl/core/errors';
import { releaseToWire, type Release, type ReleaseArmFigures } from '@agl/core/schema';
import type { ReleaseStore } from '@agl/core/store';
import { isoTime, processIo, table, type CliIo } from './output';
import { releaseRequest, releaseStore, withReleaseFlags, type ReleaseFlags } from './release-flags';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';

const num = (x: number | null, digits = 3): string => (x === null ? '-' : x.toFixed(digits));

function armRow(name: string, arm: ReleaseArmFigures | undefined, resourcesId: string): string[] {
  if (!arm) return [name, resourcesId, '0', '-', '-', '-', '-'];
  const ci =
    arm.metricLow === null || arm.metricHigh === null ? '' : ` [${num(arm.metricLow)}, ${num(arm.metricHigh)}]`;
  return [
    name,
    resourcesId,
    String(arm.requests),
    `${num(arm.metricMean)}${ci} (n=${arm.metricCount})`,
    num(arm.failureRate),
    arm.latencyP95Seconds === null ? '-' : `${(arm.latencyP95Seconds * 1000).toFixed(0)} ms`,
    num(arm.tokensMean, 1),
  ];
}

/** A release in words: state, share, both arms side by side and the decision log. */
export function describeRelease(release: Release): string {
  const lines = [
    `release ${release.releaseId}: ${release.state}, candidate share ${release.share} (schedule ${release.shares.join(' → ')})`,
    `metric ${release.metric}; guards ${release.guards.join(', ') || 'none'}; min requests ${release.minRequests}; ` +
      `false-positive rate ${release.alpha}`,
    '',
    table(
      ['ARM', 'RESOURCES', 'REQUESTS', 'METRIC MEAN [95% CI]', 'FAILURE RATE', 'LATENCY P95', 'TOKENS'],
      [
        armRow('baseline', release.arms?.baseline, release.baseline),
        armRow('candidate', release.arms?.candidate, release.candidate),
      ],
    ),
    '',
    table(
      ['TIME', 'DECISION', 'SHARE', 'BY', 'REASON'],
      release.decisions.map((d) => [isoTime(d.time), d.action, String(d.share), d.by, d.reason]),
    ),
  ];
  return lines.join('\n');
}

/** The release `id` names, or the newest one (a running one first) when none is named. */
async function chosenRelease(store: ReleaseStore, id: string | undefined, running: boolean): Promise<Release> {
  if (id !== undefined) {
    const release = await store.getRelease(id);
    if (!release)
      throw new NotFoundError('release', id, `No release ${id} in this store; list them with \`agl release status\`.`);
    return release;
  }
  const all = await store.listReleases();
  const release = running ? all.find((r) => r.state === 'running') : all[0];
  if (!release)
    throw new UserError(
      running
        ? 'No release is running; name one (agl release status <id>) or start one with agl release start --candidate <id>.'
        : 'No release in this store yet; start one with agl release start --candidate <resourcesId>.',
    );
  return release;
}

/** `agl release start|status|promote|abort`: guarded releases (a candidate version meets a share of live traffic). */
export function releaseCommand(io: CliIo = processIo): Command {
  const cmd = new Command('release').description(
    'ship a new resources version safely: a share of live traffic at a time, promoted or rolled back by the store',
  );

  storeCommand(
    'start',
    'start a release of a published candidate against the latest version',
    (c) =>
      withReleaseFlags(c.requiredOption('--candidate <resourcesId>', 'the resources version to release')).option(
        '--json',
        'print the release as JSON',
      ),
    cmd,
  ).action(async (flags: StoreFlags & ReleaseFlags & { candidate: string; json?: boolean }) => {
    const request = { ...releaseRequest(flags), candidate: flags.candidate };
    await withCliStore(flags, async (store) => {
      const release = await releaseStore(store).startRelease(request);
      if (flags.json) return io.out(JSON.stringify(releaseToWire(release), null, 2));
      io.out(release.releaseId);
      io.err(
        `started ${release.releaseId}: ${release.candidate} gets ${release.share * 100}% of requests next to ` +
          `${release.baseline}; watch it with agl release status ${release.releaseId}`,
      );
    });
  });

  storeCommand(
    'status',
    'show a release (default: the newest): both arms, the share and the decision log',
    (c) =>
      c
        .argument('[releaseId]', 'a release id')
        .option('--json', 'print JSON: id, state, share, baseline, candidate, arms, decisions'),
    cmd,
  ).action(async (id: string | undefined, flags: StoreFlags & { json?: boolean }) => {
    await withCliStore(flags, async (store) => {
      const release = await chosenRelease(releaseStore(store), id, false);
      io.out(flags.json ? JSON.stringify(releaseToWire(release), null, 2) : describeRelease(release));
    });
  });

  for (const action of ['promote', 'abort'] as const) {
    storeCommand(
      action,
      action === 'promote'
        ? 'end a running release now with its candidate as the latest version'
        : 'end a running release now; every request gets the baseline again',
      (c) =>
        c
          .argument('[releaseId]', 'a release id (default: the running release)')
          .option('--reason <text>', 'why, kept in the decision log')
          .option('--json', 'print the release as JSON'),
      cmd,
    ).action(async (id: string | undefined, flags: StoreFlags & { reason?: string; json?: boolean }) => {
      await withCliStore(flags, async (store) => {
        const releases = releaseStore(store);
        const target = await chosenRelease(releases, id, true);
        const options = flags.reason !== undefined ? { reason: flags.reason } : {};
        const release =
          action === 'promote'
            ? await releases.promoteRelease(target.releaseId, options)
            : await releases.abortRelease(target.releaseId, options);
        if (flags.json) return io.out(JSON.stringify(releaseToWire(release), null, 2));
        io.out(`${release.releaseId} ${release.state}`);
        io.err(
          action === 'promote'
            ? `${release.candidate} is now the latest version`
            : `every request is served by ${release.baseline} again`,
        );
      });
    });
  }
  return cmd;
}
