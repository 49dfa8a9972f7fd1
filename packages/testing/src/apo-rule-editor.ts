/**
 * The deterministic APO editor shared by the rule-based test LLMs (room selector, Calc-X, SQL agent): it reads APO's
 * `<prompt>`/`<critique>` (edit) and `<prompt_a>`/`<prompt_b>` (merge) requests and answers as a careful but imperfect
 * editor would, so APO's beam has to keep good edits and drop bad ones.
 */

/** The text between `<tag>` and `</tag>` (one newline trimmed on each side), or '' when absent. */
export function between(text: string, tag: string): string {
  return new RegExp(`<${tag}>\\n?([\\s\\S]*?)\\n?</${tag}>`, 'u').exec(text)?.[1] ?? '';
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 1) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

/**
 * An edit request: the prompt plus each critique point it lacks (only the first when asked to "fix ONE point"); for
 * one request in three (by a hash of the request) it also appends `harmful`, an instruction that lowers the reward.
 */
export function ruleEdit(text: string, harmful: string): string {
  const prompt = between(text, 'prompt');
  const points = between(text, 'critique')
    .split('\n')
    .map((l) => l.replace(/^-\s*(Critique:\s*)?/u, '').trim())
    .filter((l, i, all) => l !== '' && !prompt.includes(l) && all.indexOf(l) === i);
  const lines = [prompt, ...(text.includes('fix ONE point') ? points.slice(0, 1) : points)];
  if (hash(text) % 3 === 0 && !prompt.includes(harmful)) lines.push(harmful);
  return lines.join('\n');
}

/** A merge request: the lines of `prompt_a` then the new lines of `prompt_b`. */
export function ruleMerge(text: string): string {
  const lines: string[] = [];
  for (const line of [...between(text, 'prompt_a').split('\n'), ...between(text, 'prompt_b').split('\n')])
    if (!lines.includes(line)) lines.push(line);
  return lines.join('\n');
}

/** The bodies of the runs an APO critique request shows, except those that earned a reward of 1 or more. */
export function failedRuns(text: string): string[] {
  const runs = [
    ...text.matchAll(/<experiment index="\d+" status="\w+" reward="([^"]+)">\n([\s\S]*?)\n<\/experiment>/gu),
  ];
  return runs.filter((m) => !(Number(m[1]) >= 1)).map((m) => m[2] ?? '');
}

/** Collects a critique's points: each once, and none the request's `<prompt>` already says (case-insensitive). */
export function adviceCollector(text: string): { found: string[]; add: (advice: string) => void } {
  const prompt = between(text, 'prompt').toLowerCase();
  const found: string[] = [];
  const add = (advice: string): void => {
    if (!found.includes(advice) && !prompt.includes(advice.toLowerCase())) found.push(advice);
  };
  return { found, add };
}
