/** Plain stdout/stderr writers for the commands (kept apart so tests can capture them). */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
}

export const processIo: CliIo = {
  out: (line) => void process.stdout.write(`${line}\n`),
  err: (line) => void process.stderr.write(`${line}\n`),
};

/** Render rows as an aligned text table. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Seconds since the epoch as an ISO time (or `-`). */
export function isoTime(seconds: number | null | undefined): string {
  return typeof seconds === 'number' ? new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/u, 'Z') : '-';
}
