/** SQuAD-style normalisation: lower case, no punctuation, no articles, single spaces. */
export function normalizeAnswer(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, '')
    .replace(/\b(a|an|the)\b/gu, ' ')
    .replace(/\s+/gu, ' ')
    .trim();
}

/** 1 when the normalised prediction equals a normalised gold answer. */
export function exactMatch(prediction: string, answers: readonly string[]): number {
  const p = normalizeAnswer(prediction);
  return answers.some((a) => normalizeAnswer(a) === p) ? 1 : 0;
}

function f1Of(prediction: string, gold: string): number {
  const p = normalizeAnswer(prediction).split(' ').filter(Boolean);
  const g = normalizeAnswer(gold).split(' ').filter(Boolean);
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const n = counts.get(t) ?? 0;
    if (n > 0) {
      common += 1;
      counts.set(t, n - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** Token-level F1 against the best-matching gold answer. */
export function answerF1(prediction: string, answers: readonly string[]): number {
  return Math.max(0, ...answers.map((a) => f1Of(prediction, a)));
}
