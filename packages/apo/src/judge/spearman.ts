/** Ranks from 1, ties sharing the mean of their ranks. */
function ranks(values: readonly number[]): number[] {
  const order = values.map((v, i) => [v, i] as const).sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(values.length);
  for (let i = 0; i < order.length;) {
    let j = i;
    while (
      j + 1 < order.length &&
      (order[j + 1] as readonly [number, number])[0] === (order[i] as readonly [number, number])[0]
    )
      j += 1;
    for (let k = i; k <= j; k += 1) out[(order[k] as readonly [number, number])[1]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  return out;
}

/**
 * Spearman's rank correlation: Pearson's correlation of the ranks (ties averaged). `null` with fewer than two pairs or
 * when either side has every value equal (the correlation is undefined).
 */
export function spearmanRho(xs: readonly number[], ys: readonly number[]): number | null {
  if (xs.length !== ys.length)
    throw new RangeError(`spearmanRho needs equal lengths; got ${xs.length} and ${ys.length}`);
  const n = xs.length;
  if (n < 2) return null;
  const rx = ranks(xs);
  const ry = ranks(ys);
  const mean = (n + 1) / 2;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i += 1) {
    const dx = (rx[i] as number) - mean;
    const dy = (ry[i] as number) - mean;
    sxy += dx * dy;
    sxx += dx * dx;
    syy += dy * dy;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}
