/** `agl train` fixture: an agent that asks the test LLM (TEST_LLM_URL) for a + b, recorded as a Contract 2 span. */
import { fromOpenAiChatRequest, fromOpenAiChatResponse, getAglTracer, llmRequestAttributes, llmResponseAttributes } from '@agl/core/tracer';
import type { NamedResources } from '@agl/core';

interface Task {
  id: string;
  a: number;
  b: number;
}

export const agent = async (task: Task, resources: NamedResources): Promise<number> => {
  const llm = resources.llm;
  if (!llm || llm.resourceType !== 'llm') throw new Error('needs an llm resource');
  const body = { model: llm.model, messages: [{ role: 'user', content: `What is ${task.a} + ${task.b}?` }], return_token_ids: true };
  const answer = await getAglTracer()
    .getTracer('cli-fixture')
    .startActiveSpan('openai.chat.completion', async (span) => {
      span.setAttributes(llmRequestAttributes(fromOpenAiChatRequest(body, 'openai')));
      const res = await fetch(`${llm.endpoint}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const json = (await res.json()) as { choices: { message: { content: string } }[] };
      span.setAttributes(llmResponseAttributes(fromOpenAiChatResponse(json)));
      span.end();
      return json.choices[0]!.message.content;
    });
  if (task.id === 'boom') throw new Error('fixture task boom fails');
  return Number(answer) === task.a + task.b ? 1 : 0;
};

export const train: Task[] = [
  { id: 'x1', a: 1, b: 2 },
  { id: 'x2', a: 3, b: 4 },
  { id: 'x3', a: 5, b: 6 },
  { id: 'boom', a: 0, b: 0 },
];
export const val: Task[] = [{ id: 'v1', a: 10, b: 20 }];

export const config = {
  nRunners: 1,
  initialResources: { llm: { resourceType: 'llm' as const, endpoint: process.env.TEST_LLM_URL ?? 'http://127.0.0.1:9/v1', model: 'test-model' } },
};
