import OpenAI from 'openai';
import type { NamedResources } from '@agl/core';
import { emitReward } from '@agl/core/tracer';
import { instrumentedChat } from './instrumented-chat';

/** A task of the end-to-end tests. */
export interface ArithmeticTask {
  id: string;
  a: number;
  b: number;
  /** Throw after the first LLM call. */
  fail?: boolean;
}

/** The tasks: `fail` on every 25th, whose config allows `maxAttempts` 2 (3 on every 50th). */
export function arithmeticTasks(n: number): ArithmeticTask[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `t${i}`,
    a: i,
    b: i % 7,
    ...(i % 25 === 0 ? { fail: true } : {}),
  }));
}

export function maxAttemptsOf(task: ArithmeticTask): number {
  if (!task.fail) return 1;
  return Number(task.id.slice(1)) % 50 === 0 ? 3 : 2;
}

const clients = new Map<string, OpenAI>();

/**
 * The test agent: asks the LLM (plain `openai` client) for a + b, emits an intermediate reward of 0.5, throws on
 * `fail` tasks, asks again to double-check, and returns 1 when the answer is right.
 */
export async function arithmeticAgent(task: ArithmeticTask, resources: NamedResources): Promise<number> {
  const llm = resources.llm;
  if (!llm || llm.resourceType !== 'llm') throw new Error('the arithmetic agent needs an `llm` resource');
  let client = clients.get(llm.endpoint);
  if (!client) {
    client = new OpenAI({ baseURL: llm.endpoint, apiKey: llm.apiKey ?? 'x', maxRetries: 0 });
    clients.set(llm.endpoint, client);
  }
  const first = await instrumentedChat(client, {
    model: llm.model,
    messages: [{ role: 'user', content: `What is ${task.a} + ${task.b}?` }],
    return_token_ids: true,
  });
  const answer = first.choices[0]?.message.content ?? '';
  emitReward(0.5);
  if (task.fail) throw new Error(`task ${task.id} fails on purpose`);
  const check = await instrumentedChat(client, {
    model: llm.model,
    messages: [{ role: 'user', content: `Double-check ${task.a} + ${task.b}` }],
    return_token_ids: true,
  });
  return Number(check.choices[0]?.message.content) === task.a + task.b && Number(answer) === task.a + task.b ? 1 : 0;
}
