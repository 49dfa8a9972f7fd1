/**
 * `agl train --backend tinker` fixture: a one-call agent that reaches the model through its LLM resource
 * (`llmBaseUrl` → the command's Tinker-mode gateway) with the official openai client; the reward depends on what
 * was sampled, so a group's rollouts score differently.
 */
import OpenAI from 'openai';
import type { NamedResources } from '@agl/core';
import { llmBaseUrl, type AgentContext } from '@agl/trainer';

export const agent = async (task: string, resources: NamedResources, ctx: AgentContext): Promise<number> => {
  const llm = llmBaseUrl(resources, ctx.rolloutId, ctx.attemptId);
  if (!llm) throw new Error('the resources name no LLM');
  const client = new OpenAI({ baseURL: llm.url, apiKey: 'unused', maxRetries: 0 });
  const res = await client.chat.completions.create({
    model: llm.model,
    messages: [{ role: 'user', content: `Say something about ${task}.` }],
    max_tokens: 6,
  });
  return ((res.choices[0]?.message.content ?? '').length % 5) / 4;
};

export const train = ['cats', 'dogs', 'owls', 'bees'];
