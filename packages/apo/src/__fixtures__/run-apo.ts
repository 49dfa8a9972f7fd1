import type { LightningStore } from '@agl/core';
import { Trainer } from '@agl/trainer';
import { roomAgent, roomTasks, ROOM_APO_SEARCH, ROOM_SEED_PROMPT, type RoomTask } from '../demo/index';
import { APO, type ApoOptions } from '../index';

export const SEED_PROMPT = ROOM_SEED_PROMPT;
export const TRAIN: RoomTask[] = roomTasks(12, 7, 't');
export const VAL: RoomTask[] = roomTasks(12, 99, 'v');

/** Run APO on the room task through a real Trainer + runners against the test LLM at `baseURL`. */
export async function runApo(
  o: { store: LightningStore; baseURL: string; signal?: AbortSignal } & ApoOptions,
): Promise<APO> {
  const { store, baseURL, signal, ...options } = o;
  const apo = new APO({
    llm: { baseURL, retryBaseDelayMs: 1 },
    gradientModel: 'critic-model',
    applyEditModel: 'editor-model',
    ...ROOM_APO_SEARCH,
    ...options,
  });
  await new Trainer({
    algorithm: apo,
    store,
    nRunners: 4,
    pollIntervalSeconds: 0.01,
    initialResources: {
      llm: { resourceType: 'llm', endpoint: baseURL, model: 'agent-model' },
      system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT },
    },
  }).fit(roomAgent as never, { train: TRAIN, val: VAL, signal });
  return apo;
}
