import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { recordFeedback, recordRewardSpan } from '@agl/core/store';
import { SqliteStore } from '@agl/store/sqlite';
import { serveStore } from './child-processes';
import { median, round, type ResultTree } from './results';

/** Options of {@link runTrafficBench}. */
export interface TrafficBenchOptions {
  /** Stored rollouts (default 1,000,000). */
  rollouts: number;
  /** Window of the polls and of the seeded start times, in days (default 30). */
  windowDays?: number;
  /** Sequential uncached polls measured (default 30). */
  polls?: number;
  /** Seconds of concurrent polling (4 "tabs") while `/health` is probed (default 15). */
  loadSeconds?: number;
  log?: (line: string) => void;
}

const SHARE = { unscoped: 0.1, train: 0.05, failed: 0.05, agentReward: 0.02, feedback: 0.01 };
const AGENTS = ['support-bot', 'triage', 'summarizer'];

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))] ?? Number.NaN;
}

async function timedGet(url: string): Promise<number> {
  const began = performance.now();
  const res = await fetch(url);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}`);
  return performance.now() - began;
}

/**
 * Seeds a SQLite store with `n` rollouts spread over the window (one attempt each; production, unscoped and training
 * sources; agent rewards and feedback on a few), by bulk SQL inserts of documents the store itself wrote, so the file
 * is exactly what a store holds. Returns the seconds it took.
 */
export async function seedTrafficStore(path: string, n: number, now: number, windowSeconds: number): Promise<void> {
  // Templates: one rollout with an agent reward and one with feedback, written through the store.
  const store = new SqliteStore({ path });
  const a = await store.startRollout({ input: { q: 'template' }, metadata: { source: 'production', agent_name: 'x' } });
  await recordRewardSpan(store, a.rolloutId, {
    'agentlightning.reward.0.name': 'primary',
    'agentlightning.reward.0.value': 1,
  });
  await store.updateAttempt(a.rolloutId, a.attempt.attemptId, { status: 'succeeded', endTime: now });
  await recordFeedback(store, a.rolloutId, 0.5, { comment: 'template' });
  await store.close();
  const db = new Database(path);
  db.pragma('synchronous = OFF');
  const rolloutDoc = JSON.parse((db.prepare('SELECT doc FROM rollouts').get() as { doc: string }).doc) as Record<
    string,
    unknown
  >;
  const attemptDoc = JSON.parse((db.prepare('SELECT doc FROM attempts').get() as { doc: string }).doc) as Record<
    string,
    unknown
  >;
  const spanRows = db.prepare('SELECT doc, attributes FROM spans ORDER BY seq').all() as Array<{
    doc: string;
    attributes: string;
  }>;
  const [rewardSpan, feedbackSpan] = spanRows.map((r) => ({
    doc: JSON.parse(r.doc) as Record<string, unknown>,
    attributes: JSON.parse(r.attributes) as Record<string, unknown>,
  }));
  db.exec('DELETE FROM spans; DELETE FROM attempts; DELETE FROM rollouts; DELETE FROM span_sequence_ids;');
  const insertRollout = db.prepare(
    'INSERT INTO rollouts (rollout_id, status, start_time, end_time, mode, schema_version, doc) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const insertAttempt = db.prepare(
    'INSERT INTO attempts (rollout_id, attempt_id, sequence_id, schema_version, doc) VALUES (?, ?, 1, ?, ?)',
  );
  const insertSpan = db.prepare(
    'INSERT INTO spans (rollout_id, attempt_id, span_id, sequence_id, schema_version, doc, attributes) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const version = (db.prepare('SELECT schema_version AS v FROM rollouts LIMIT 1').get() as { v: number } | undefined)
    ?.v;
  const schemaVersion = version ?? 1;
  const prefix = randomBytes(4).toString('hex');
  const chunk = 50_000;
  for (let from = 0; from < n; from += chunk) {
    db.transaction(() => {
      for (let i = from; i < Math.min(n, from + chunk); i += 1) {
        const rolloutId = `ro-${prefix}-${i}`;
        const attemptId = `at-${prefix}-${i}`;
        const start = now - windowSeconds + ((i + 0.5) / n) * windowSeconds;
        const u = ((i * 7919) % 1000) / 1000;
        const train = u < SHARE.train;
        const status = (i * 104729) % 1000 < SHARE.failed * 1000 ? 'failed' : 'succeeded';
        const metadata = train
          ? { task_id: `t${i % 100}` }
          : { source: u < SHARE.train + SHARE.unscoped ? 'unscoped' : 'production', agent_name: AGENTS[i % 3] };
        const mode = train ? 'train' : null;
        const end = start + 1.5;
        insertRollout.run(
          rolloutId,
          status,
          start,
          end,
          mode,
          schemaVersion,
          JSON.stringify({
            ...rolloutDoc,
            rolloutId,
            input: { question: `question ${i}` },
            startTime: start,
            endTime: end,
            mode,
            status,
            metadata,
          }),
        );
        insertAttempt.run(
          rolloutId,
          attemptId,
          schemaVersion,
          JSON.stringify({ ...attemptDoc, rolloutId, attemptId, startTime: start, endTime: end, status }),
        );
        const spans: Array<typeof rewardSpan> = [];
        const r = ((i * 15485863) % 10_000) / 10_000;
        if (r < SHARE.agentReward || train) spans.push(rewardSpan);
        if (!train && r >= 1 - SHARE.feedback) spans.push(feedbackSpan);
        spans.forEach((span, k) => {
          const spanId = `sp-${i}-${k}`;
          insertSpan.run(
            rolloutId,
            attemptId,
            spanId,
            k + 1,
            schemaVersion,
            JSON.stringify({ ...span!.doc, rolloutId, attemptId, spanId, sequenceId: k + 1, startTime: end + k }),
            JSON.stringify(span!.attributes),
          );
        });
      }
    })();
  }
  db.exec('ANALYZE');
  db.close();
}

/**
 * The live-traffic benchmark (issue 55): `n` rollouts in a SQLite file, the real `agl store serve` on it, then the
 * dashboard's poll of `GET /v1/agl/ext/traffic` (production sources, the default) over a 30-day window by the day:
 * uncached polls one at a time (each
 * with a new `since`, as the dashboard sends), cached polls, then four pollers at once for a while with `/health`
 * probed every 100 ms; the server's peak RSS.
 */
export async function runTrafficBench(options: TrafficBenchOptions): Promise<ResultTree> {
  const log = options.log ?? (() => undefined);
  const windowSeconds = (options.windowDays ?? 30) * 86_400;
  const dir = mkdtempSync(join(tmpdir(), 'agl-bench-traffic-'));
  const path = join(dir, 'traffic.sqlite');
  const now = Math.floor(Date.now() / 1000);
  try {
    let began = performance.now();
    await seedTrafficStore(path, options.rollouts, now, windowSeconds);
    const seedSeconds = (performance.now() - began) / 1000;
    log(`  seeded ${options.rollouts.toLocaleString('en-US')} rollouts in ${seedSeconds.toFixed(1)} s`);
    const server = await serveStore({ dbPath: path });
    try {
      // The dashboard's poll: production sources (the default scope), 30 days by the day.
      const query = (since: number, scope = '') => `${server.url}/v1/agl/ext/traffic?bucket=day${scope}&since=${since}`;
      began = performance.now();
      const firstMs = await timedGet(query(now - windowSeconds));
      log(`  first poll ${firstMs.toFixed(0)} ms`);
      // A server from before `scope` (the "before" figures) counts every rollout without it.
      const scoped = (await fetch(query(now - windowSeconds, '&scope=all'))).ok;
      const allScope = scoped ? '&scope=all' : '';
      const all = (await (await fetch(query(now - windowSeconds, allScope))).json()) as {
        total: { count: number };
      };
      if (all.total.count !== options.rollouts)
        throw new Error(`the poll counted ${all.total.count} rollouts, not ${options.rollouts}`);
      const polls: number[] = [];
      for (let i = 0; i < (options.polls ?? 30); i += 1) polls.push(await timedGet(query(now - windowSeconds + 1 + i)));
      const allPolls: number[] = [];
      for (let i = 0; i < 5; i += 1) allPolls.push(await timedGet(query(now - windowSeconds + 50 + i, allScope)));
      const cached: number[] = [];
      for (let i = 0; i < 10; i += 1) cached.push(await timedGet(query(now - windowSeconds)));
      log(`  poll median ${median(polls).toFixed(0)} ms, p95 ${percentile(polls, 0.95).toFixed(0)} ms`);
      // Four tabs polling at once (each poll uncached), /health probed meanwhile.
      const until = performance.now() + (options.loadSeconds ?? 15) * 1000;
      let k = 0;
      const underLoad: number[] = [];
      const tab = async (): Promise<void> => {
        while (performance.now() < until) underLoad.push(await timedGet(query(now - windowSeconds + 100 + k++)));
      };
      const health: number[] = [];
      const probe = async (): Promise<void> => {
        while (performance.now() < until) {
          health.push(await timedGet(`${server.url}/v1/agl/health`));
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await Promise.all([tab(), tab(), tab(), tab(), probe()]);
      log(
        `  4 pollers: ${underLoad.length} polls, health median ${median(health).toFixed(1)} ms, p95 ${percentile(health, 0.95).toFixed(1)} ms`,
      );
      const rss = server.peakRssMb();
      log(`  server peak RSS ${rss?.toFixed(0)} MiB`);
      return {
        rollouts: options.rollouts,
        windowDays: windowSeconds / 86_400,
        seedSeconds: round(seedSeconds, 1),
        firstPollMs: round(firstMs, 1),
        pollMs: { median: round(median(polls), 1), p95: round(percentile(polls, 0.95), 1), count: polls.length },
        cachedPollMs: { median: round(median(cached), 1) },
        allSourcesPollMs: { median: round(median(allPolls), 1) },
        underLoad: {
          pollers: 4,
          polls: underLoad.length,
          pollMsMedian: round(median(underLoad), 1),
          pollMsP95: round(percentile(underLoad, 0.95), 1),
          healthMsMedian: round(median(health), 1),
          healthMsP95: round(percentile(health, 0.95), 1),
          healthMsMax: round(Math.max(...health), 1),
          healthProbes: health.length,
        },
        peakRssMb: rss === null ? null : round(rss, 0),
        targets: { pollMs: 200, healthMs: 50, rssMb: 300 },
      };
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
