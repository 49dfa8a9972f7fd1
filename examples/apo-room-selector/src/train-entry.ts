/**
 * Entry module for the CLI: `agl train examples/apo-room-selector/src/train-entry.ts --algorithm apo`. The agent and
 * the critique / edit models use $OPENAI_BASE_URL (default OpenAI) and $OPENAI_API_KEY.
 */
import type { ApoOptions } from '@agl/apo';
import { roomAgent, roomTasks, ROOM_APO_SEARCH, ROOM_SEED_PROMPT } from '@agl/apo/demo';

const baseURL = process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1';
const apiKey = process.env.OPENAI_API_KEY;

export const agent = roomAgent;
export const train = roomTasks(12, 7, 't');
export const val = roomTasks(12, 99, 'v');
export const config = {
  nRunners: 4,
  initialResources: {
    llm: {
      resourceType: 'llm' as const,
      endpoint: baseURL,
      model: process.env.APO_AGENT_MODEL ?? 'gpt-4.1-mini',
      apiKey: apiKey ?? null,
    },
    system_prompt: { resourceType: 'prompt_template' as const, template: ROOM_SEED_PROMPT },
  },
};
export const apo: ApoOptions = {
  llm: { baseURL, apiKey },
  gradientModel: process.env.APO_GRADIENT_MODEL ?? 'gpt-5-mini',
  applyEditModel: process.env.APO_EDIT_MODEL ?? 'gpt-4.1-mini',
  ...ROOM_APO_SEARCH,
  // Default when unset: .agl/apo/best-prompt.txt (set by `agl train --algorithm apo`).
  outputPath: process.env.APO_OUTPUT || undefined,
};
