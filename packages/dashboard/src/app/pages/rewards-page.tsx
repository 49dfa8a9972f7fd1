import { useMemo, useState } from 'react';
import { Bar, BarChart, Line, LineChart } from 'recharts';
import { chartFrame } from '../components/chart-frame';
import type { ApiClient, RewardSeries } from '../api/api-client';
import { Empty, ErrorBox, Loading } from '../components/states';
import { formatPercent, formatReward } from '../lib/format';
import { useAsync } from '../lib/use-async';

const COLORS: Record<string, string> = { train: '#2563eb', val: '#ea580c', test: '#16a34a', none: '#6b7280' };
const WIDTH = 560;
const HEIGHT = 260;

/** Rolling mean of the rewards of one mode, in finishing order. */
function curve(series: RewardSeries, window: number): Array<Record<string, number | null>> {
  const points = [...series.points]
    .filter((p) => p.reward !== null)
    .sort((a, b) => (a.end_time ?? 0) - (b.end_time ?? 0));
  const recent: Record<string, number[]> = {};
  return points.map((p, i) => {
    const mode = p.mode ?? 'none';
    const list = (recent[mode] ??= []);
    list.push(p.reward as number);
    if (list.length > window) list.shift();
    return { n: i + 1, [mode]: list.reduce((a, b) => a + b, 0) / list.length };
  });
}

function histogram(series: RewardSeries, bins = 10): Array<Record<string, number | string>> {
  const values = series.points.filter((p) => p.reward !== null);
  if (values.length === 0) return [];
  const lo = Math.min(0, ...values.map((p) => p.reward as number));
  const hi = Math.max(1, ...values.map((p) => p.reward as number));
  const width = (hi - lo) / bins || 1;
  const out = Array.from({ length: bins }, (_, i) => ({
    bin: `${formatReward(lo + i * width)}–${formatReward(lo + (i + 1) * width)}`,
    train: 0,
    val: 0,
    other: 0,
  }));
  for (const p of values) {
    const i = Math.min(bins - 1, Math.floor(((p.reward as number) - lo) / width));
    const mode = p.mode === 'train' || p.mode === 'val' ? p.mode : 'other';
    out[i]![mode] += 1;
  }
  return out;
}

/**
 * Reward curves over time and per resources version for every mode (train, val, test and `none`: live traffic), the
 * reward distribution and success rate.
 */
export function RewardsPage({ client, pollMs = 5000 }: { client: ApiClient; pollMs?: number }) {
  const [threshold, setThreshold] = useState(1);
  const [window, setWindow] = useState(5);
  const state = useAsync(() => client.rewards({ successThreshold: threshold }), String(threshold), pollMs);
  const data = state.data;
  const overTime = useMemo(() => (data ? curve(data, window) : []), [data, window]);
  const modes = Object.keys(data?.overall ?? {});
  // Per resources version and mode (every mode, live traffic's `none` too): mean reward, success rate, rollouts.
  const perVersion = useMemo(
    () =>
      (data?.by_resources ?? []).map((v) => {
        const row: Record<string, string | number | null> = { name: `#${v.index + 1}`, id: v.resources_id ?? '(none)' };
        for (const [mode, stats] of Object.entries(v.modes)) {
          row[mode] = stats.mean;
          row[`${mode}Success`] = stats.success_rate;
          row[`${mode}Count`] = stats.count;
        }
        return row;
      }),
    [data],
  );
  const hist = useMemo(() => (data ? histogram(data) : []), [data]);
  if (state.error && !data) return <ErrorBox error={state.error} onRetry={state.reload} />;
  if (!data) return <Loading what="rewards" />;
  return (
    <section>
      <header className="page-header">
        <h1>Rewards</h1>
        <label>
          Success when reward ≥{' '}
          <input
            aria-label="Success threshold"
            type="number"
            step="0.1"
            value={threshold}
            onChange={(e) => setThreshold(Number(e.target.value))}
            style={{ width: '5em' }}
          />
        </label>
      </header>
      {data.points.length === 0 ? (
        <Empty title="No finished rollouts yet.">Reward curves appear once rollouts finish with a reward.</Empty>
      ) : (
        <>
          <div className="cards" data-testid="reward-cards">
            {modes.map((mode) => {
              const o = data.overall[mode]!;
              return (
                <div className="card" key={mode} data-testid={`reward-card-${mode}`}>
                  <h3>{mode}</h3>
                  <p className="big">{formatReward(o.mean)}</p>
                  <p className="muted">
                    mean of {o.count} rewards · success {formatPercent(o.success_rate)} · {o.succeeded}/{o.finished}{' '}
                    succeeded
                  </p>
                </div>
              );
            })}
          </div>
          <div className="charts">
            <figure>
              <figcaption>
                Reward over time (rolling mean of{' '}
                <select aria-label="Window" value={window} onChange={(e) => setWindow(Number(e.target.value))}>
                  {[1, 5, 10, 25].map((n) => (
                    <option key={n} value={n}>
                      {n}
                    </option>
                  ))}
                </select>
                )
              </figcaption>
              <LineChart width={WIDTH} height={HEIGHT} data={overTime}>
                {chartFrame(
                  { dataKey: 'n', label: { value: 'finished rollout #', position: 'insideBottom', offset: -2 } },
                  { domain: ['auto', 'auto'] },
                )}
                {modes.map((m) => (
                  <Line
                    key={m}
                    dataKey={m}
                    stroke={COLORS[m] ?? '#6b7280'}
                    dot={false}
                    connectNulls
                    isAnimationActive={false}
                  />
                ))}
              </LineChart>
            </figure>
            <figure>
              <figcaption>Mean reward per resources version</figcaption>
              <BarChart width={WIDTH} height={HEIGHT} data={perVersion}>
                {chartFrame({ dataKey: 'name' })}
                {modes.map((m) => (
                  <Bar key={m} dataKey={m} fill={COLORS[m] ?? COLORS.none} isAnimationActive={false} />
                ))}
              </BarChart>
            </figure>
            <figure data-testid="version-count-chart">
              <figcaption>Rewarded rollouts per resources version</figcaption>
              <BarChart width={WIDTH} height={HEIGHT} data={perVersion}>
                {chartFrame({ dataKey: 'name' }, { allowDecimals: false })}
                {modes.map((m) => (
                  <Bar
                    key={m}
                    dataKey={`${m}Count`}
                    name={m}
                    stackId="n"
                    fill={COLORS[m] ?? COLORS.none}
                    isAnimationActive={false}
                  />
                ))}
              </BarChart>
            </figure>
            <figure>
              <figcaption>Reward distribution</figcaption>
              <BarChart width={WIDTH} height={HEIGHT} data={hist}>
                {chartFrame({ dataKey: 'bin' }, { allowDecimals: false })}
                <Bar dataKey="train" stackId="a" fill={COLORS.train} isAnimationActive={false} />
                <Bar dataKey="val" stackId="a" fill={COLORS.val} isAnimationActive={false} />
                <Bar dataKey="other" stackId="a" fill={COLORS.none} isAnimationActive={false} />
              </BarChart>
            </figure>
            <figure>
              <figcaption>Success rate per resources version</figcaption>
              <LineChart width={WIDTH} height={HEIGHT} data={perVersion}>
                {chartFrame({ dataKey: 'name' }, { domain: [0, 1], tickFormatter: (v: number) => formatPercent(v) })}
                {modes.map((m) => (
                  <Line
                    key={m}
                    dataKey={`${m}Success`}
                    name={m}
                    stroke={COLORS[m] ?? COLORS.none}
                    connectNulls
                    isAnimationActive={false}
                  />
                ))}
              </LineChart>
            </figure>
          </div>
          {data.truncated ? (
            <p className="muted">
              Showing the latest {data.points.length} of {data.total_points} finished rollouts.
            </p>
          ) : null}
        </>
      )}
    </section>
  );
}
