import { useState } from 'react';
import { Line, LineChart } from 'recharts';
import type { Release, ReleaseArmFigures } from '@agl/core/schema';
import type { ApiClient } from '../api/api-client';
import { chartFrame } from '../components/chart-frame';
import { Empty, ErrorBox, Link, Loading } from '../components/states';
import { TableHead } from '../components/table-head';
import { formatPercent, formatReward, formatTime } from '../lib/format';
import { navigate, useLocation } from '../lib/router';
import { useAsync } from '../lib/use-async';

const STATE_CLASS: Record<Release['state'], string> = {
  running: 'status-running',
  promoted: 'status-succeeded',
  rolled_back: 'status-failed',
  aborted: 'status-cancelled',
};

function metricCell(arm: ReleaseArmFigures | undefined): string {
  if (!arm || arm.metricMean === null) return '—';
  const ci =
    arm.metricLow === null || arm.metricHigh === null
      ? ''
      : ` [${formatReward(arm.metricLow)}, ${formatReward(arm.metricHigh)}]`;
  return `${formatReward(arm.metricMean)}${ci} (n=${arm.metricCount})`;
}

/** The two arms side by side: requests, the metric's mean with its 95% interval, and the guards' figures. */
function Arms({ release }: { release: Release }) {
  const rows = [
    ['baseline', release.baseline, release.arms?.baseline],
    ['candidate', release.candidate, release.arms?.candidate],
  ] as const;
  return (
    <table className="data" data-testid="release-arms">
      <TableHead
        columns={[
          'Arm',
          'Resources',
          'Requests',
          `Metric (${release.metric})`,
          'Failure rate',
          'Latency p95',
          'Tokens',
        ]}
      />
      <tbody>
        {rows.map(([name, id, arm]) => (
          <tr key={name} data-testid={`arm-${name}`}>
            <td>{name}</td>
            <td className="mono">
              <Link to={`/resources?id=${encodeURIComponent(id)}`}>{id}</Link>
            </td>
            <td className="num">{arm?.requests ?? 0}</td>
            <td className="num">{metricCell(arm)}</td>
            <td className="num">{formatPercent(arm?.failureRate)}</td>
            <td className="num">
              {arm?.latencyP95Seconds == null ? '—' : `${(arm.latencyP95Seconds * 1000).toFixed(0)} ms`}
            </td>
            <td className="num">{arm?.tokensMean == null ? '—' : arm.tokensMean.toFixed(1)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The candidate's share as steps over time, up to the release's end (or now). */
function ShareChart({ release }: { release: Release }) {
  const end = release.endTime ?? Date.now() / 1000;
  const points = release.shareHistory.flatMap((h, i) => {
    const next = release.shareHistory[i + 1]?.time ?? end;
    return [
      { t: formatTime(h.time), share: h.share * 100 },
      { t: formatTime(next), share: h.share * 100 },
    ];
  });
  return (
    <figure>
      <figcaption>Candidate share over time (%)</figcaption>
      <LineChart width={560} height={220} data={points}>
        {chartFrame({ dataKey: 't' }, { domain: [0, 100] })}
        <Line dataKey="share" stroke="#2563eb" dot={false} isAnimationActive={false} name="share %" />
      </LineChart>
    </figure>
  );
}

function Decisions({ release }: { release: Release }) {
  return (
    <table className="data" data-testid="release-decisions">
      <TableHead columns={['Time', 'Decision', 'Share', 'By', 'Reason']} />
      <tbody>
        {release.decisions.map((d, i) => (
          <tr key={i} data-testid="decision-row" title={JSON.stringify(d.figures, null, 2)}>
            <td>{formatTime(d.time)}</td>
            <td>{d.action}</td>
            <td className="num">{formatPercent(d.share)}</td>
            <td>{d.by}</td>
            <td>{d.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Releases: each release's arms side by side, the candidate's share over time, the decision log, and buttons that
 * promote or abort a running release (calls carry the dashboard's token).
 */
export function ReleasesPage({ client, pollMs = 5000 }: { client: ApiClient; pollMs?: number }) {
  const location = useLocation();
  const state = useAsync(() => client.releases(), 'releases', pollMs);
  const [acting, setActing] = useState<string | null>(null);
  const [actionError, setActionError] = useState<Error | null>(null);
  if (state.error && !state.data) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (!state.data) return <Loading what="releases" />;
  const releases = state.data;
  if (releases.length === 0)
    return (
      <Empty title="No releases yet.">
        Start one with <code>agl release start --candidate &lt;resourcesId&gt;</code> or{' '}
        <code>agl resources publish &lt;file&gt; --release</code>.
      </Empty>
    );
  const selected = releases.find((r) => r.releaseId === location.query.get('id')) ?? releases[0]!;
  const act = (action: 'promote' | 'abort') => {
    setActing(action);
    setActionError(null);
    client
      .endRelease(selected.releaseId, action, `${action === 'promote' ? 'promoted' : 'aborted'} from the dashboard`)
      .then(
        () => state.reload(),
        (error: unknown) => setActionError(error instanceof Error ? error : new Error(String(error))),
      )
      .finally(() => setActing(null));
  };
  return (
    <section>
      <h1>Releases</h1>
      <div className="split">
        <table className="data versions" data-testid="releases-table">
          <TableHead columns={['Release', 'State', 'Share', 'Started']} />
          <tbody>
            {releases.map((r) => (
              <tr
                key={r.releaseId}
                className={r === selected ? 'selected clickable' : 'clickable'}
                data-testid="release-row"
                onClick={() => navigate(`/releases?id=${encodeURIComponent(r.releaseId)}`, { replace: true })}
              >
                <td className="mono">{r.releaseId}</td>
                <td>
                  <span className={`badge ${STATE_CLASS[r.state]}`}>{r.state}</span>
                </td>
                <td className="num">{formatPercent(r.share)}</td>
                <td>{formatTime(r.createTime)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <div className="version-detail" data-testid="release-detail">
          <h2>
            <span className="mono" data-testid="selected-release">
              {selected.releaseId}
            </span>{' '}
            <span className={`badge ${STATE_CLASS[selected.state]}`} data-testid="release-state">
              {selected.state}
            </span>
          </h2>
          <p>
            Candidate share <strong data-testid="release-share">{formatPercent(selected.share)}</strong> of the schedule{' '}
            {selected.shares.map((s) => formatPercent(s)).join(' → ')}; guards {selected.guards.join(', ') || 'none'};
            decisions by an always-valid sequential test (false-positive rate {formatPercent(selected.alpha)}).
          </p>
          {selected.state === 'running' ? (
            <p className="actions">
              <button type="button" disabled={acting !== null} onClick={() => act('promote')} data-testid="promote">
                Promote candidate
              </button>{' '}
              <button type="button" disabled={acting !== null} onClick={() => act('abort')} data-testid="abort">
                Abort (back to baseline)
              </button>
            </p>
          ) : null}
          {actionError ? <ErrorBox error={actionError} /> : null}
          <Arms release={selected} />
          <ShareChart release={selected} />
          <h3>Decision log</h3>
          <Decisions release={selected} />
        </div>
      </div>
    </section>
  );
}
