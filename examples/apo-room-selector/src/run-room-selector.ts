import { optimizePrompt, type ApoResult, type OptimizePromptSetup } from '@agl/apo';
import { roomAgent, roomTasks, ROOM_APO_SEARCH, ROOM_SEED_PROMPT } from '@agl/apo/demo';
import { MemoryStore } from '@agl/store';

/** The starting prompt: deliberately vague. */
export const SEED_PROMPT = ROOM_SEED_PROMPT;

/** Options of {@link runRoomSelector}: the endpoint and models (store: in memory unless given). */
export type RoomSelectorOptions = OptimizePromptSetup;

/**
 * Optimise the room agent's system prompt with APO and return the result. The agent, its tasks and its grader are
 * `@agl/apo/demo`'s meeting-room task: one traced chat call whose reply names a room.
 */
export async function runRoomSelector(o: RoomSelectorOptions): Promise<ApoResult> {
  return optimizePrompt({
    ...o,
    store: o.store ?? new MemoryStore(),
    apo: { ...ROOM_APO_SEARCH, ...o.apo },
    agent: roomAgent,
    train: roomTasks(12, 7, 't'),
    val: roomTasks(12, 99, 'v'),
    seedPrompt: SEED_PROMPT,
  });
}
