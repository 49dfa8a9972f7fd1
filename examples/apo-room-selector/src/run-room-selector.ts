import type { LightningStore } from '@agl/core';
import { APO, type ApoEvent, type ApoOptions, type ApoResult } from '@agl/apo';
import { MemoryStore } from '@agl/store';
import { Trainer } from '@agl/trainer';
import { roomAgent, roomTasks } from './room-task';

/** The starting prompt: deliberately vague. */
export const SEED_PROMPT = 'You help people book meeting rooms. Pick a room for the request.';

/** Options of {@link runRoomSelector}. */
export interface RoomSelectorOptions {
  /** OpenAI-compatible base URL with `/v1` (the agent, critique and edit models all live there). */
  baseURL: string;
  apiKey?: string;
  agentModel: string;
  gradientModel: string;
  applyEditModel: string;
  store?: LightningStore;
  nTrain?: number;
  nVal?: number;
  /** APO options that override the example's small defaults. */
  apo?: Partial<ApoOptions>;
  onEvent?: (event: ApoEvent) => void;
}

/** Optimise the room agent's system prompt with APO and return the result. */
export async function runRoomSelector(o: RoomSelectorOptions): Promise<ApoResult> {
  const apo = new APO({
    llm: { baseURL: o.baseURL, apiKey: o.apiKey, maxConcurrency: 4 },
    gradientModel: o.gradientModel,
    applyEditModel: o.applyEditModel,
    beamWidth: 2,
    branchFactor: 2,
    beamRounds: 3,
    gradientBatchSize: 3,
    valBatchSize: 6,
    seed: 2,
    onEvent: o.onEvent,
    ...o.apo,
  });
  await new Trainer({
    algorithm: apo,
    store: o.store ?? new MemoryStore(),
    nRunners: 4,
    initialResources: {
      llm: { resourceType: 'llm', endpoint: o.baseURL, model: o.agentModel, apiKey: o.apiKey ?? null },
      system_prompt: { resourceType: 'prompt_template', template: SEED_PROMPT },
    },
  }).fit(roomAgent as never, { train: roomTasks(o.nTrain ?? 12, 7, 't'), val: roomTasks(o.nVal ?? 12, 99, 'v') });
  if (!apo.result) throw new Error('APO finished without a result');
  return apo.result;
}
