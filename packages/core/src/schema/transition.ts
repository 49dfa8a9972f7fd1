import { z } from 'zod';
import { RolloutMode } from './enums';
import { JsonValue } from './json';

/** One chat message (OpenAI shape). */
export const ChatMessage = z.looseObject({
  /** system, user, assistant or tool. */
  role: z.string(),
  /** Text content, or structured content parts; `null` for tool-call-only assistant messages. */
  content: JsonValue.optional(),
  /** Assistant tool calls. */
  toolCalls: z.array(z.object({ id: z.string(), name: z.string(), arguments: z.string() })).optional(),
  /** For `tool` messages: the call this answers. */
  toolCallId: z.string().optional(),
  /** Optional speaker name. */
  name: z.string().optional(),
});
/** @see {@link ChatMessage} */
export type ChatMessage = z.infer<typeof ChatMessage>;

/** One token's log-probability. */
export const TokenLogprob = z.object({
  /** The token text. */
  token: z.string(),
  /** Natural-log probability (≤ 0). */
  logprob: z.number(),
});
/** @see {@link TokenLogprob} */
export type TokenLogprob = z.infer<typeof TokenLogprob>;

/**
 * One MDP step: the LLM saw `state` and produced `action`. Built from one LLM-call span (Contract 3).
 */
export const Transition = z.object({
  /** Name of the agent that made the call, or `null` when unknown. */
  agentName: z.string().nullable(),
  /** The prompt: chat messages, and the exact prompt token ids when the gateway captured them. */
  state: z.object({ messages: z.array(ChatMessage), tokenIds: z.array(z.number().int()).optional() }),
  /** The response message, with token ids and logprobs when known. */
  action: z.object({
    message: ChatMessage,
    tokenIds: z.array(z.number().int()).optional(),
    logprobs: z.array(TokenLogprob).optional(),
  }),
  /** Reward matched to this call (AGL 0.3 rules); the final reward on the last call; `null` when none. */
  reward: z.number().nullable(),
  /** True on the last transition of the trajectory. */
  done: z.boolean(),
  /** Ids of the spans this transition came from (LLM span first). */
  spanIds: z.array(z.string()),
  /** Provider response id (`gen_ai.response.id`), used for de-duplication. */
  responseId: z.string().nullable().optional(),
  /** Sequence id of the LLM span. */
  sequenceId: z.number().int().optional(),
});
/** @see {@link Transition} */
export type Transition = z.infer<typeof Transition>;

/** The ordered transitions of one attempt. */
export const Trajectory = z.object({
  /** Rollout id. */
  rolloutId: z.string(),
  /** Attempt id. */
  attemptId: z.string(),
  /** `rollout.metadata.task_id`, or the stable hash of the input when missing. */
  taskId: z.string(),
  /** train / val / test / null. */
  mode: RolloutMode,
  /** Transitions in call order. */
  transitions: z.array(Transition),
  /** The attempt's final reward, or `null`. */
  finalReward: z.number().nullable(),
});
/** @see {@link Trajectory} */
export type Trajectory = z.infer<typeof Trajectory>;
