import { DEFAULT_STORE_PATH } from './open-store';
import type { ProgressSnapshot } from './progress';

/** What a finished `fit`/`dev` run reports at its end. */
export interface RunSummary {
  /** `fit`, `dev` or `agl train`: the first word of each line. */
  label: string;
  progress: ProgressSnapshot | null;
  durationSeconds: number;
  /** The SQLite file or URL the rollouts are in; `null` for a store instance that does not say (memory, PostgreSQL). */
  location: string | null;
}

/** One-line summary of a progress snapshot: rollouts done by status, running, queued, mean reward, rate, time. */
export function formatProgress(s: ProgressSnapshot): string {
  const finished = s.succeeded + s.failed + s.cancelled;
  const reward = s.meanReward === null ? 'n/a' : s.meanReward.toFixed(3);
  return `rollouts ${finished}/${s.total} done (${s.succeeded} ok, ${s.failed} failed${s.cancelled ? `, ${s.cancelled} cancelled` : ''}), ${s.running} running, ${s.queuing} queued · mean reward ${reward} · ${s.rate.toFixed(1)}/s · ${s.elapsedSeconds.toFixed(1)}s`;
}

/** The `agl` flags that open the store at `location`: none for the default file. */
export function storeFlagsFor(location: string): string {
  if (/^https?:\/\//u.test(location)) return ` --store-url ${location}`;
  if (location === DEFAULT_STORE_PATH) return '';
  return ` --store ${/\s/u.test(location) ? JSON.stringify(location) : location}`;
}

/**
 * The closing lines of a run: rollouts by status, the mean final reward, where the store is, and the commands that
 * show what the run recorded.
 */
export function formatRunSummary(summary: RunSummary): string[] {
  const { label, progress: p } = summary;
  const seconds = `${summary.durationSeconds.toFixed(1)}s`;
  const lines: string[] = [];
  if (p === null) {
    lines.push(`${label}: done in ${seconds}.`);
  } else {
    const counts = [
      `${p.succeeded} succeeded`,
      `${p.failed} failed`,
      ...(p.cancelled ? [`${p.cancelled} cancelled`] : []),
      ...(p.queuing + p.running > 0 ? [`${p.queuing + p.running} unfinished`] : []),
    ];
    const reward =
      p.meanReward === null
        ? 'no final reward recorded (return a number from the agent, or call emitReward)'
        : `mean final reward ${p.meanReward.toFixed(3)}`;
    lines.push(
      `${label}: ${p.total} rollout${p.total === 1 ? '' : 's'} in ${seconds}: ${counts.join(', ')}; ${reward}.`,
    );
  }
  if (summary.location === null) {
    lines.push('  store: the LightningStore instance passed to the Trainer (memory or PostgreSQL)');
    return lines;
  }
  const flags = storeFlagsFor(summary.location);
  lines.push(`  store: ${summary.location}`);
  lines.push(`  next:  npx agl rollouts list${flags}  # status, final reward, attempts`);
  lines.push(`         npx agl spans latest${flags}  # the LLM calls and rewards of the newest rollout`);
  if (flags.startsWith(' --store-url'))
    lines.push(`         open ${summary.location.replace(/\/+$/u, '')}/  # the dashboard`);
  else
    lines.push(
      `         npx agl store serve${flags.replace('--store', '--db')}  # the dashboard, at the URL it prints`,
    );
  return lines;
}

/**
 * A progress callback that writes one {@link formatProgress} line every `everySeconds` of a run (nothing for a run
 * shorter than that), so a long run shows it is alive.
 */
export function periodicProgressLines(
  write: (line: string) => void,
  label: string,
  everySeconds = 10,
): (snapshot: ProgressSnapshot) => void {
  let next = everySeconds;
  return (snapshot) => {
    if (snapshot.elapsedSeconds < next) return;
    next = (Math.floor(snapshot.elapsedSeconds / everySeconds) + 1) * everySeconds;
    write(`${label}: ${formatProgress(snapshot)}`);
  };
}
