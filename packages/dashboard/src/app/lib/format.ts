/** Seconds → `850 ms`, `12.3 s`, `4m 05s`, `2h 03m`; `—` for null. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '—';
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 2 : 1)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m ${String(Math.floor(seconds % 60)).padStart(2, '0')}s`;
  return `${Math.floor(seconds / 3600)}h ${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m`;
}

/** A reward with up to 3 decimals; `—` for null. */
export function formatReward(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return String(Math.round(value * 1000) / 1000);
}

/** Epoch seconds → local `YYYY-MM-DD HH:MM:SS`; `—` for null. */
export function formatTime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const d = new Date(seconds * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** How long ago `seconds` was, relative to `now` (both epoch seconds): `3 s ago`, `2m 10s ago`. */
export function formatAgo(seconds: number | null | undefined, now: number): string {
  if (seconds === null || seconds === undefined) return 'never';
  return `${formatDuration(Math.max(0, now - seconds))} ago`;
}

/** A percentage with no decimals; `—` for null. */
export function formatPercent(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return `${Math.round(value * 100)}%`;
}

/** A short id for tight columns: `ro-1234abcd…` stays readable. */
export function shortId(id: string | null | undefined, length = 14): string {
  if (!id) return '—';
  return id.length > length ? `${id.slice(0, length)}…` : id;
}
