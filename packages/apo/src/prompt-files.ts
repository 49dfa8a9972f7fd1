import { readFileSync } from 'node:fs';
import { UserError } from '@agl/core/errors';
import type { FineTuningRow } from '@agl/core/transitions';

/** The critique / edit templates that ship in `prompts/` (versioned by file name). */
export const CRITIQUE_PROMPTS = ['critique-findings.v1', 'critique-bullets.v1', 'critique-checklist.v1'] as const;
export const EDIT_PROMPTS = ['edit-revise.v1', 'edit-conservative.v1'] as const;
export const REFLECT_PROMPT = 'reflect-task.v1';
export const MERGE_PROMPT = 'merge.v1';

const PROMPTS_DIR = new URL('../prompts/', import.meta.url);
const cache = new Map<string, string>();

/** A template: its id (file name without `.md`, or a path for user files) and text. */
export interface PromptFile {
  id: string;
  text: string;
}

/** Load a built-in template by id (`critique-findings.v1`) or a user file by path (ends with `.md` / `.txt`). */
export function loadPromptFile(idOrPath: string): PromptFile {
  const cached = cache.get(idOrPath);
  if (cached !== undefined) return { id: idOrPath, text: cached };
  const isPath = /\.(md|txt)$/u.test(idOrPath);
  const url = isPath ? idOrPath : new URL(`${idOrPath}.md`, PROMPTS_DIR);
  let text: string;
  try {
    text = readFileSync(url, 'utf8');
  } catch (err) {
    throw new UserError(
      `APO prompt file ${idOrPath} could not be read (${String(err)}). Use a built-in id (${[...CRITIQUE_PROMPTS, ...EDIT_PROMPTS].join(', ')}) or a path to a .md file.`,
      { cause: err },
    );
  }
  cache.set(idOrPath, text);
  return { id: idOrPath, text };
}

/** Replace `{{name}}` with `values[name]`; unknown names stay as they are. */
export function renderPromptFile(text: string, values: Record<string, string>): string {
  return text.replace(/\{\{([a-z_]+)\}\}/gu, (match, name: string) =>
    name in values ? (values[name] as string) : match,
  );
}

/** One evaluated rollout, as critique prompts see it. */
export interface Experiment {
  rolloutId: string;
  taskId: string;
  status: string;
  /** Missing reward → null (scored as 0). */
  finalReward: number | null;
  /** `TraceToMessages` rows of the rollout (one per LLM call). */
  messages: FineTuningRow[];
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  return JSON.stringify(content);
}

/** Experiments as tagged text blocks (status, reward, then `[role] content` lines of the last LLM call). */
export function formatExperiments(experiments: readonly Experiment[]): string {
  return experiments
    .map((e, i) => {
      const row = e.messages[e.messages.length - 1];
      const lines = (row?.messages ?? []).map((m) => `[${m.role}] ${messageText(m.content)}`);
      const reward = e.finalReward === null ? 'none' : String(e.finalReward);
      return `<experiment index="${i + 1}" status="${e.status}" reward="${reward}">\n${lines.join('\n')}\n</experiment>`;
    })
    .join('\n\n');
}

/** Strip code fences / tags a model may wrap its answer in. */
export function cleanModelPrompt(text: string): string {
  let t = text.trim();
  const fence = /^```[a-z]*\n([\s\S]*?)\n```$/u.exec(t);
  if (fence) t = (fence[1] ?? '').trim();
  const tag = /^<prompt>\n?([\s\S]*?)\n?<\/prompt>$/u.exec(t);
  if (tag) t = (tag[1] ?? '').trim();
  return t;
}
