import type Database from 'better-sqlite3';

/** The outcome of running one query: its rows (as arrays), or the error SQLite raised. */
export type QueryOutcome = { ok: true; columns: number; rows: unknown[][] } | { ok: false; error: string };

/** Run `sql` read-only; at most `maxRows` rows are kept. Never throws. */
export function runQuery(db: Database.Database, sql: string, maxRows = 1_000): QueryOutcome {
  try {
    const stmt = db.prepare(sql);
    if (!stmt.reader) return { ok: false, error: 'only SELECT queries are allowed' };
    const rows: unknown[][] = [];
    for (const row of stmt.raw().iterate() as Iterable<unknown[]>) {
      rows.push(row);
      if (rows.length >= maxRows) break;
    }
    return { ok: true, columns: stmt.columns().length, rows };
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** A compact text view of an outcome for the checker's prompt (first 10 rows). */
export function describeOutcome(outcome: QueryOutcome): string {
  if (!outcome.ok) return `ERROR: ${outcome.error}`;
  const nonNull = outcome.rows.filter((r) => r.some((v) => v !== null));
  if (nonNull.length === 0) return 'no rows (empty result or only NULL)';
  const shown = outcome.rows.slice(0, 10).map((r) => r.map((v) => JSON.stringify(v)).join(' | '));
  const more = outcome.rows.length > 10 ? `\n… ${outcome.rows.length - 10} more rows` : '';
  return `${outcome.rows.length} row(s), ${outcome.columns} column(s):\n${shown.join('\n')}${more}`;
}

function canonicalRow(row: unknown[]): string {
  return JSON.stringify(row.map((v) => (typeof v === 'number' ? Math.round(v * 100) / 100 : v)));
}

/**
 * Execution match: 1 when `predicted` returns the same rows as `gold` (same column count; numbers compared to two
 * decimals; row order compared only when the gold query has ORDER BY), else 0. A failing or empty query scores 0.
 */
export function executionMatch(db: Database.Database, predicted: string, gold: string): number {
  const want = runQuery(db, gold);
  const got = runQuery(db, predicted);
  if (!want.ok) throw new Error(`gold query failed (${want.error}): ${gold}`);
  if (!got.ok || got.columns !== want.columns || got.rows.length !== want.rows.length) return 0;
  const a = want.rows.map(canonicalRow);
  const b = got.rows.map(canonicalRow);
  if (!/\border\s+by\b/iu.test(gold)) {
    a.sort();
    b.sort();
  }
  return a.every((row, i) => row === b[i]) ? 1 : 0;
}
