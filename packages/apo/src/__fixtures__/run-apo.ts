import type { LightningStore } from '@agl/core';
import { Trainer } from '@agl/trainer';
import { APO, type ApoOptions } from '../index';
import { roomAgent, roomTasks, type RoomTask } from './room-task';

export const SEED_PROMPT = 'You help people book meeting rooms. Pick a room for the request.';
export const TRAIN: RoomTask[] = roomTasks(12, 7, 't');
export const VAL: RoomTask[] = roomTasks(12, 99, 'v');

/** Run APO on the room task through a real Trainer + runners against the test LLM at `baseURL`. */
export async function runApo(o: { store: LightningStore; baseURL: string; signal?: AbortSignal } & ApoOptions): Promise<APO> {
  const { store, baseURL, signal, ...options } = o;
  const apo = new APO({
    llm: { baseURL, retryBaseDelayMs: 1 },
    gradientModel: 'critic-model',
    applyEditModel: 'editor-model',
    beamWidth: 2,
    branchFactor: 2,
    beamRounds: 3,
    gradientBatchSize: 3,
    valBatchSize: 6,
    seed: 2,
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
