import type { ApiClient } from '../api/api-client';
import { Empty, ErrorBox, Link, Loading, StatusBadge } from '../components/states';
import { formatAgo } from '../lib/format';
import { useAsync } from '../lib/use-async';
import { TableHead } from '../components/table-head';

/** Runner workers: status, heartbeat age, current rollout. */
export function RunnersPage({
  client,
  pollMs = 3000,
  now = () => Date.now() / 1000,
}: {
  client: ApiClient;
  pollMs?: number;
  now?: () => number;
}) {
  const state = useAsync(() => client.workers(), 'workers', pollMs);
  if (state.error && !state.data) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (!state.data) return <Loading what="runners" />;
  const t = now();
  return (
    <section>
      <h1>Runners</h1>
      {state.data.total === 0 ? (
        <Empty title="No runner has connected yet.">
          Workers appear when a runner dequeues a rollout or sends a heartbeat.
        </Empty>
      ) : (
        <table className="data" data-testid="runners-table">
          <TableHead columns={['Worker', 'Status', 'Heartbeat', 'Current rollout', 'Last dequeue']} />
          <tbody>
            {state.data.items.map((w) => (
              <tr key={w.workerId} data-testid="runner-row">
                <td className="mono">{w.workerId}</td>
                <td>
                  <StatusBadge status={w.status} />
                </td>
                <td data-testid="heartbeat-age">{formatAgo(w.lastHeartbeatTime, t)}</td>
                <td className="mono">
                  {w.currentRolloutId ? (
                    <Link to={`/rollouts/${encodeURIComponent(w.currentRolloutId)}`}>{w.currentRolloutId}</Link>
                  ) : (
                    '—'
                  )}
                </td>
                <td>{formatAgo(w.lastDequeueTime, t)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
