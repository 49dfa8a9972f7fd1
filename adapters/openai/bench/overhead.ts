// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/openai`.
import OpenAI from 'openai';
import { MemoryStore } from '@agl/store';
import { runOverheadBench } from '@agl/testing';
import { instrumentOpenAI } from '../src/index';

const body = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 0,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'It is sunny.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 },
});
// The in-process fake model: a fetch that answers at once, no socket.
const fakeFetch = async (): Promise<Response> =>
  new Response(body, { headers: { 'content-type': 'application/json' } });
const make = (): OpenAI =>
  new OpenAI({ apiKey: 'k', baseURL: 'http://fake.invalid/v1', fetch: fakeFetch, maxRetries: 0 });
const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a weather agent.' },
  { role: 'user', content: 'Weather in Paris?' },
];
const plain = make();
const instrumented = instrumentOpenAI(make());

await runOverheadBench({
  adapter: '@agl/openai',
  store: new MemoryStore(),
  callFor: (traced) => {
    const client = traced ? instrumented : plain;
    return () => client.chat.completions.create({ model: 'm', messages });
  },
});
