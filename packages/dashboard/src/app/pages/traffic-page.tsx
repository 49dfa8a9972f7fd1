import { useMemo, useState } from 'react';
import { Bar, BarChart, Line, LineChart } from 'recharts';
import { chartFrame } from '../components/chart-frame';
import type { ApiClient, TrafficFilters } from '../api/api-client';
import { FilterSelect, MODES } from '../components/filter-select';
import { TextFilter } from '../components/text-filter';
import { Empty, ErrorBox, Link, Loading, StatusBadge } from '../components/states';
import { formatPercent, formatReward, formatTime, shortId } from '../lib/format';
import { useAsync } from '../lib/use-async';
import { TableHead } from '../components/table-head';

const WIDTH = 560;
const HEIGHT = 240;
/**
 * Time windows offered, in seconds, with the bucket each is shown in. The first (the default) sends no `since`: the
 * server takes the last 7 days, starting later when the data does.
 */
const WINDOWS = [
  { label: 'span of the data (≤ 7 days)', seconds: null, bucket: 'hour' },
  { label: 'last 24 hours', seconds: 86_400, bucket: 'hour' },
  { label: 'last 7 days', seconds: 7 * 86_400, bucket: 'hour' },
  { label: 'last 30 days', seconds: 30 * 86_400, bucket: 'day' },
  { label: 'last 365 days', seconds: 365 * 86_400, bucket: 'day' },
] as const;

function bucketLabel(start: number, bucket: 'hour' | 'day'): string {
  const iso = new Date(start * 1000).toISOString();
  return bucket === 'day' ? iso.slice(0, 10) : `${iso.slice(5, 10)} ${iso.slice(11, 16)}`;
}

function numberOrNull(text: string): number | null {
  if (text.trim() === '') return null;
  const n = Number(text);
  return Number.isFinite(n) ? n : null;
}

/** Options of {@link TrafficPage}. */
export interface TrafficPageProps {
  client: ApiClient;
  /** The page's query: `since`/`until` (epoch seconds) pin the window, e.g. for links and tests. */
  query?: URLSearchParams;
  /** Poll interval in ms; default 5000. */
  pollMs?: number;
}

/**
 * Live traffic: recorded requests per hour or day (count, failure rate, feedback, mean final reward), filtered by
 * source, agent, feedback present or absent, reward range, time window and mode, with the matching rollouts below.
 */
export function TrafficPage({ client, query = new URLSearchParams(), pollMs = 5000 }: TrafficPageProps) {
  const pinnedSince = numberOrNull(query.get('since') ?? '');
  const pinnedUntil = numberOrNull(query.get('until') ?? '');
  const [windowIndex, setWindowIndex] = useState(0);
  const [bucket, setBucket] = useState<'hour' | 'day'>((query.get('bucket') as 'hour' | 'day' | null) ?? 'hour');
  const [filters, setFilters] = useState<TrafficFilters>({
    mode: query.get('mode') ?? null,
    scope: query.get('scope') === 'all' ? 'all' : 'production',
  });
  const [minText, setMinText] = useState('');
  const [maxText, setMaxText] = useState('');
  const window = WINDOWS[windowIndex]!;
  // Unpinned, the window ends at the server's now (every poll sees new requests) and starts `window.seconds` before.
  const effective = useMemo<TrafficFilters>(
    () => ({
      ...filters,
      minReward: numberOrNull(minText),
      maxReward: numberOrNull(maxText),
      since: pinnedSince ?? (window.seconds === null ? null : Math.floor(Date.now() / 1000 - window.seconds)),
      until: pinnedUntil,
    }),
    [filters, minText, maxText, pinnedSince, pinnedUntil, window],
  );
  const key = JSON.stringify([bucket, effective]);
  const traffic = useAsync(() => client.traffic(bucket, effective), key, pollMs);
  const rows = useAsync(
    () =>
      client.rollouts({
        limit: 50,
        offset: 0,
        sortBy: 'start_time',
        sortOrder: 'desc',
        mode: effective.mode ?? null,
        traffic: effective,
      }),
    key,
    pollMs,
  );
  const set = (patch: Partial<TrafficFilters>) => setFilters((f) => ({ ...f, ...patch }));
  const data = traffic.data;
  const chart = useMemo(
    () =>
      (data?.buckets ?? []).map((b) => ({
        name: bucketLabel(b.start, data!.bucket),
        requests: b.count,
        failed: b.failed,
        feedback: b.feedback_count,
        meanReward: b.mean_reward,
        failureRate: b.failure_rate,
      })),
    [data],
  );

  return (
    <section>
      <header className="page-header">
        <h1>Live traffic</h1>
      </header>
      <div className="filters" data-testid="traffic-filters">
        <div role="group" aria-label="Sources" className="segmented" data-testid="traffic-scope">
          {(
            [
              ['production', 'Production', 'recorded requests and unscoped LLM calls (sources production, unscoped)'],
              ['all', 'All sources', 'every rollout: training, validation and jobs too'],
            ] as const
          ).map(([scope, label, title]) => (
            <button
              key={scope}
              type="button"
              title={title}
              aria-pressed={filters.scope === scope}
              data-testid={`traffic-scope-${scope}`}
              onClick={() => set({ scope })}
            >
              {label}
            </button>
          ))}
        </div>
        <label>
          Window
          <select
            aria-label="Window"
            value={windowIndex}
            disabled={pinnedSince !== null}
            onChange={(e) => {
              const i = Number(e.target.value);
              setWindowIndex(i);
              setBucket(WINDOWS[i]!.bucket);
            }}
          >
            {WINDOWS.map((w, i) => (
              <option key={w.label} value={i}>
                {w.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Per
          <select aria-label="Bucket" value={bucket} onChange={(e) => setBucket(e.target.value as 'hour' | 'day')}>
            <option value="hour">hour</option>
            <option value="day">day</option>
          </select>
        </label>
        <FilterSelect
          label="Source"
          value={filters.source}
          choices={data?.sources ?? []}
          onChange={(source) => set({ source })}
        />
        <FilterSelect
          label="Agent"
          value={filters.agent}
          choices={data?.agents ?? []}
          onChange={(agent) => set({ agent })}
        />
        <FilterSelect
          label="Feedback"
          value={filters.feedback}
          choices={[
            { value: 'with', label: 'with feedback' },
            { value: 'without', label: 'without feedback' },
          ]}
          onChange={(feedback) => set({ feedback: feedback as TrafficFilters['feedback'] })}
        />
        <FilterSelect
          label="Mode"
          value={filters.mode}
          choices={MODES}
          // Training modes have no production source: picking one shows all sources.
          onChange={(mode) => set(mode ? { mode, scope: 'all' } : { mode })}
        />
        {(
          [
            ['Reward from', 'Minimum reward', minText, setMinText],
            ['to', 'Maximum reward', maxText, setMaxText],
          ] as const
        ).map(([label, name, value, onChange]) => (
          <TextFilter
            key={name}
            label={label}
            name={name}
            type="number"
            step="0.1"
            value={value}
            onChange={onChange}
            style={{ width: '5em' }}
          />
        ))}
      </div>
      {traffic.error && !data ? <ErrorBox error={traffic.error} onRetry={traffic.reload} /> : null}
      {!data ? (
        traffic.error ? null : (
          <Loading what="traffic" />
        )
      ) : (
        <>
          <div className="cards" data-testid="traffic-totals">
            <div className="card">
              <h3>Requests</h3>
              <p className="big" data-testid="traffic-total-count">
                {data.total.count}
              </p>
              <p className="muted">
                {formatTime(data.since)} – {formatTime(data.until)}
              </p>
            </div>
            <div className="card">
              <h3>Failure rate</h3>
              <p className="big">{formatPercent(data.total.failure_rate)}</p>
              <p className="muted">{data.total.failed} failed</p>
            </div>
            <div className="card">
              <h3>Feedback</h3>
              <p className="big" data-testid="traffic-total-feedback">
                {data.total.feedback_count}
              </p>
              <p className="muted">on {data.total.with_feedback} requests</p>
            </div>
            <div className="card">
              <h3>Mean reward</h3>
              <p className="big" data-testid="traffic-total-reward">
                {formatReward(data.total.mean_reward)}
              </p>
              <p className="muted">over {data.total.rewarded} rewarded requests</p>
            </div>
          </div>
          {data.total.count === 0 ? (
            <Empty title="No recorded requests in this window.">
              Record a service with <code>observe</code> or <code>observeHandler</code> from <code>@agl/client</code>;
              its requests show here as they arrive.
            </Empty>
          ) : (
            <div className="charts">
              <figure data-testid="traffic-chart">
                <figcaption>Requests per {data.bucket}</figcaption>
                <BarChart width={WIDTH} height={HEIGHT} data={chart}>
                  {chartFrame({ dataKey: 'name' }, { allowDecimals: false })}
                  <Bar dataKey="requests" fill="#2563eb" isAnimationActive={false} />
                  <Bar dataKey="failed" fill="#dc2626" isAnimationActive={false} />
                  <Bar dataKey="feedback" fill="#16a34a" isAnimationActive={false} />
                </BarChart>
              </figure>
              <figure>
                <figcaption>Mean final reward and failure rate per {data.bucket}</figcaption>
                <LineChart width={WIDTH} height={HEIGHT} data={chart}>
                  {chartFrame({ dataKey: 'name' }, { domain: ['auto', 'auto'] })}
                  <Line
                    dataKey="meanReward"
                    name="mean reward"
                    stroke="#7c3aed"
                    connectNulls
                    isAnimationActive={false}
                  />
                  <Line
                    dataKey="failureRate"
                    name="failure rate"
                    stroke="#dc2626"
                    connectNulls
                    isAnimationActive={false}
                  />
                </LineChart>
              </figure>
            </div>
          )}
          <details>
            <summary>Per {data.bucket}</summary>
            <table className="data" data-testid="traffic-table">
              <thead>
                <tr>
                  <th>{data.bucket === 'day' ? 'Day' : 'Hour'} (UTC)</th>
                  <th>Requests</th>
                  <th>Failed</th>
                  <th>Feedback</th>
                  <th>Mean reward</th>
                </tr>
              </thead>
              <tbody>
                {data.buckets
                  .filter((b) => b.count > 0)
                  .map((b) => (
                    <tr key={b.start} data-testid="traffic-bucket">
                      <td>{bucketLabel(b.start, data.bucket)}</td>
                      <td className="num">{b.count}</td>
                      <td className="num">{b.failed}</td>
                      <td className="num">{b.feedback_count}</td>
                      <td className="num">{formatReward(b.mean_reward)}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </details>
        </>
      )}
      <h2>Requests {rows.data ? `(${rows.data.total})` : ''}</h2>
      {rows.error ? <ErrorBox error={rows.error} onRetry={rows.reload} /> : null}
      {rows.data ? (
        <table className="data" data-testid="traffic-rollouts">
          <TableHead columns={['Rollout', 'Status', 'Source', 'Agent', 'Reward', 'Feedback', 'Started']} />
          <tbody>
            {rows.data.items.map((row) => {
              const meta = row.rollout.metadata as Record<string, unknown>;
              return (
                <tr key={row.rollout.rolloutId} data-testid="traffic-rollout-row">
                  <td className="mono">
                    <Link to={`/rollouts/${encodeURIComponent(row.rollout.rolloutId)}`}>
                      {shortId(row.rollout.rolloutId)}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={row.rollout.status} />
                  </td>
                  <td>{typeof meta.source === 'string' ? meta.source : '—'}</td>
                  <td>{typeof meta.agent_name === 'string' ? meta.agent_name : '—'}</td>
                  <td className="num">{formatReward(row.finalReward)}</td>
                  <td className="num">{row.feedbackCount}</td>
                  <td>{formatTime(row.rollout.startTime)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
