import type { ApiClient } from '../api/api-client';
import { Empty, ErrorBox, JsonView, Link, Loading, StatusBadge } from '../components/states';
import { formatDuration, formatReward, formatTime } from '../lib/format';
import { useAsync } from '../lib/use-async';
import { TableHead } from '../components/table-head';
import { TraceView } from './trace-page';

/** One rollout: its summary, input, attempts, and the waterfall of the latest (or chosen) attempt. */
export function RolloutDetailPage({
  client,
  rolloutId,
  attemptId,
}: {
  client: ApiClient;
  rolloutId: string;
  attemptId?: string | null;
}) {
  const state = useAsync(() => client.rollout(rolloutId), rolloutId, 5000);
  if (state.error) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (state.data === undefined) return <Loading what="rollout" />;
  const detail = state.data;
  if (detail === null)
    return (
      <Empty title={`Rollout ${rolloutId} does not exist.`}>Check the id, or go back to the rollouts table.</Empty>
    );
  const r = detail.rollout;
  const chosen =
    detail.attempts.find((a) => a.attemptId === attemptId) ?? detail.attempts[detail.attempts.length - 1] ?? null;
  return (
    <section>
      <header className="page-header">
        <h1>
          Rollout <span className="mono">{r.rolloutId}</span>
        </h1>
        <Link to="/rollouts">← all rollouts</Link>
      </header>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={r.status} />
        </dd>
        <dt>Mode</dt>
        <dd>{r.mode ?? '—'}</dd>
        <dt>Final reward</dt>
        <dd data-testid="detail-reward" className="reward-value">
          {formatReward(detail.finalReward)}
        </dd>
        <dt>Duration</dt>
        <dd>{formatDuration(detail.durationSeconds)}</dd>
        <dt>Resources</dt>
        <dd className="mono">
          {r.resourcesId ? <Link to={`/resources?id=${encodeURIComponent(r.resourcesId)}`}>{r.resourcesId}</Link> : '—'}
        </dd>
        <dt>Started</dt>
        <dd>{formatTime(r.startTime)}</dd>
      </dl>
      <h2>Feedback ({detail.feedback.length})</h2>
      {detail.feedback.length === 0 ? (
        <p className="muted" data-testid="feedback-empty">
          No user feedback yet. Give some with <code>feedback(rolloutId, reward)</code> from <code>@agl/client</code> or{' '}
          <code>agl feedback {r.rolloutId} 1</code>; the latest feedback becomes the final reward.
        </p>
      ) : (
        <table className="data" data-testid="feedback-table">
          <TableHead columns={['Given', 'Reward', 'Comment', 'Dimensions']} />
          <tbody>
            {detail.feedback.map((f, i) => (
              <tr key={f.span_id ?? i} data-testid="feedback-row">
                <td>{formatTime(f.time)}</td>
                <td className="num">{formatReward(f.reward)}</td>
                <td>{f.comment ?? '—'}</td>
                <td className="mono">
                  {Object.entries(f.dimensions)
                    .map(([name, value]) => `${name}=${formatReward(value)}`)
                    .join(', ') || '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <details className="input">
        <summary>Task input</summary>
        <JsonView value={r.input} />
      </details>
      <h2>Attempts ({detail.attempts.length})</h2>
      {detail.attempts.length === 0 ? (
        <Empty title="No attempt yet.">The rollout is waiting in the queue for a runner.</Empty>
      ) : (
        <table className="data" data-testid="attempts-table">
          <thead>
            <tr>
              <th>#</th>
              <th>Attempt</th>
              <th>Status</th>
              <th>Worker</th>
              <th>Started</th>
              <th>Duration</th>
              <th>Spans</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {detail.attempts.map((a) => (
              <tr
                key={a.attemptId}
                className={chosen?.attemptId === a.attemptId ? 'selected' : undefined}
                data-testid="attempt-row"
              >
                <td>{a.sequenceId}</td>
                <td className="mono">{a.attemptId}</td>
                <td>
                  <StatusBadge status={a.status} />
                </td>
                <td className="mono">{a.workerId ?? '—'}</td>
                <td>{formatTime(a.startTime)}</td>
                <td>{formatDuration(a.endTime === null ? null : a.endTime - a.startTime)}</td>
                <td className="num" data-testid="attempt-span-count">
                  {a.spanCount}
                </td>
                <td>
                  <Link to={`/rollouts/${encodeURIComponent(r.rolloutId)}?attempt=${encodeURIComponent(a.attemptId)}`}>
                    trace
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {chosen ? (
        <>
          <h2>
            Trace of attempt #{chosen.sequenceId} <span className="muted mono">{chosen.attemptId}</span>
          </h2>
          <TraceView
            client={client}
            rolloutId={r.rolloutId}
            attemptId={chosen.attemptId}
            live={chosen.endTime === null}
          />
        </>
      ) : null}
    </section>
  );
}
