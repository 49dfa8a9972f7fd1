import { useState } from 'react';
import type { ApiClient, RolloutTableQuery } from '../api/api-client';
import { FilterSelect, MODES } from '../components/filter-select';
import { TextFilter } from '../components/text-filter';
import { Empty, ErrorBox, Link, Loading, StatusBadge } from '../components/states';
import { formatDuration, formatReward, formatTime, shortId } from '../lib/format';
import { useAsync } from '../lib/use-async';

const COLUMNS: Array<{ key: string; label: string }> = [
  { key: 'rollout_id', label: 'Rollout' },
  { key: 'status', label: 'Status' },
  { key: 'mode', label: 'Mode' },
  { key: 'reward', label: 'Reward' },
  { key: 'duration', label: 'Duration' },
  { key: 'attempts', label: 'Attempts' },
  { key: 'worker_id', label: 'Worker' },
  { key: 'resources_id', label: 'Resources' },
  { key: 'start_time', label: 'Started' },
];
const STATUSES = ['queuing', 'preparing', 'running', 'succeeded', 'failed', 'cancelled', 'requeuing'];
const PAGE_SIZES = [25, 50, 100];

/** Options of {@link RolloutsPage}. */
export interface RolloutsPageProps {
  client: ApiClient;
  /** Poll interval of the live table, in ms; default 3000. */
  pollMs?: number;
  /** Show only the rollouts of this resources version. */
  resourcesId?: string | null;
}

/** The rollouts table: server-side paging, sorting and filters; live while training runs. */
export function RolloutsPage({ client, pollMs = 3000, resourcesId = null }: RolloutsPageProps) {
  const [query, setQuery] = useState<RolloutTableQuery>({
    limit: 25,
    offset: 0,
    sortBy: 'start_time',
    sortOrder: 'desc',
    resourcesId,
  });
  const [live, setLive] = useState(true);
  const key = JSON.stringify(query);
  const state = useAsync(() => client.rollouts(query), key, live ? pollMs : null);
  const set = (patch: Partial<RolloutTableQuery>) => setQuery((q) => ({ ...q, offset: 0, ...patch }));
  const sortBy = (column: string) =>
    setQuery((q) => ({
      ...q,
      offset: 0,
      sortBy: column,
      sortOrder: q.sortBy === column && q.sortOrder === 'desc' ? 'asc' : 'desc',
    }));
  const page = state.data;
  const hasFilter = Boolean(
    query.status || query.mode || query.rolloutIdContains || query.workerIdContains || query.resourcesId,
  );

  return (
    <section>
      <header className="page-header">
        <h1>Rollouts</h1>
        <label className="live">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} /> Live
        </label>
      </header>
      <form className="filters" onSubmit={(e) => e.preventDefault()}>
        <FilterSelect label="Status" value={query.status} choices={STATUSES} onChange={(status) => set({ status })} />
        <FilterSelect label="Mode" value={query.mode} choices={MODES} onChange={(mode) => set({ mode })} />
        {(
          [
            ['Rollout id', 'rolloutIdContains'],
            ['Worker', 'workerIdContains'],
          ] as const
        ).map(([label, key]) => (
          <TextFilter
            key={key}
            label={label}
            name={`${label} filter`}
            placeholder="contains…"
            value={query[key] ?? ''}
            onChange={(text) => set({ [key]: text || null })}
          />
        ))}
        {query.resourcesId ? (
          <button type="button" className="chip" onClick={() => set({ resourcesId: null })} title="Clear">
            resources {query.resourcesId} ×
          </button>
        ) : null}
      </form>
      {state.error ? <ErrorBox error={state.error} onRetry={state.reload} /> : null}
      {page === undefined ? (
        state.error ? null : (
          <Loading what="rollouts" />
        )
      ) : page.total === 0 ? (
        <Empty title={hasFilter ? 'No rollout matches these filters.' : 'No rollouts yet.'}>
          {hasFilter
            ? 'Clear a filter to see more.'
            : 'Start a training run (agl train …) against this store; rollouts appear here live.'}
        </Empty>
      ) : (
        <>
          <table className="data" data-testid="rollouts-table">
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th
                    key={c.key}
                    aria-sort={
                      query.sortBy === c.key ? (query.sortOrder === 'asc' ? 'ascending' : 'descending') : 'none'
                    }
                  >
                    <button type="button" className="sort" onClick={() => sortBy(c.key)}>
                      {c.label}
                      {query.sortBy === c.key ? (query.sortOrder === 'asc' ? ' ▲' : ' ▼') : ''}
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {page.items.map((row) => (
                <tr key={row.rollout.rolloutId} data-testid="rollout-row">
                  <td>
                    <Link
                      to={`/rollouts/${encodeURIComponent(row.rollout.rolloutId)}`}
                      className="mono"
                      testId="rollout-link"
                    >
                      {row.rollout.rolloutId}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={row.rollout.status} />
                  </td>
                  <td>{row.rollout.mode ?? '—'}</td>
                  <td className="num" data-testid="rollout-reward">
                    {formatReward(row.finalReward)}
                  </td>
                  <td className="num">{formatDuration(row.durationSeconds)}</td>
                  <td className="num">{row.attemptCount}</td>
                  <td className="mono">{row.workerId ?? '—'}</td>
                  <td className="mono" title={row.rollout.resourcesId ?? ''}>
                    {shortId(row.rollout.resourcesId)}
                  </td>
                  <td>{formatTime(row.rollout.startTime)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav className="pager">
            <button
              type="button"
              disabled={query.offset === 0}
              onClick={() => setQuery((q) => ({ ...q, offset: Math.max(0, q.offset - q.limit) }))}
            >
              ← Prev
            </button>
            <span>
              {page.offset + 1}–{page.offset + page.items.length} of{' '}
              <strong data-testid="rollouts-total">{page.total}</strong>
            </span>
            <button
              type="button"
              disabled={page.offset + page.items.length >= page.total}
              onClick={() => setQuery((q) => ({ ...q, offset: q.offset + q.limit }))}
            >
              Next →
            </button>
            <select aria-label="Page size" value={query.limit} onChange={(e) => set({ limit: Number(e.target.value) })}>
              {PAGE_SIZES.map((n) => (
                <option key={n} value={n}>
                  {n} / page
                </option>
              ))}
            </select>
          </nav>
        </>
      )}
    </section>
  );
}
