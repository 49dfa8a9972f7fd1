import { UserError } from '@agl/core/errors';

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/**
 * A `--since` / `--until` value as epoch seconds: an ISO date or date-time (`2026-12-01`, `2026-12-01T10:00:00Z`), or
 * a time before `nowSeconds` written as a number and a unit (`30m`, `12h`, `7d`, `2w`; `s` seconds).
 */
export function parseTimeBound(value: string, nowSeconds: number, flag = 'since'): number {
  const text = value.trim();
  const relative = /^(\d+(?:\.\d+)?)([smhdw])$/u.exec(text);
  if (relative) return nowSeconds - Number(relative[1]) * (UNIT_SECONDS[relative[2] as string] as number);
  const ms = /^\d{4}-\d{2}-\d{2}/u.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isFinite(ms)) return ms / 1000;
  throw new UserError(
    `--${flag} got ${JSON.stringify(value)}; pass an ISO date (2026-12-01 or 2026-12-01T10:00:00Z) or a time ago such as 30m, 12h, 7d, 2w.`,
  );
}
