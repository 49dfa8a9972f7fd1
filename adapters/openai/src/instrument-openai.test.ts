import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { describeAdapterConformance } from '@agl/testing';
import { MemoryStore } from '@agl/store';
import { createStoreServer } from '@agl/store/server';
import { instrumentOpenAI } from './instrument-openai';
import { runChatAgent, runResponsesAgent } from './__fixtures__/weather-agent';

const fixture = (name: string): string => fileURLToPath(new URL(`../../../packages/core/src/adapters/__fixtures__/openai/${name}.json`, import.meta.url));
const client = (env: { baseURL: string; apiKey: string }): OpenAI => instrumentOpenAI(new OpenAI({ baseURL: env.baseURL, apiKey: env.apiKey, maxRetries: 0 }));

describeAdapterConformance({
  name: '@agl/openai',
  createStore: () => new MemoryStore(),
  serveStore: (store) => createStoreServer({ store, port: 0 }),
  targets: [
    {
      name: 'chat.completions',
      agentName: null,
      tokenIds: true,
      propagatesHeaders: true,
      explicit: async (env) => void (await runChatAgent(client(env), env.model)),
      preload: { agentFile: fileURLToPath(new URL('./__fixtures__/weather-agent.ts', import.meta.url)), register: '@agl/openai/register' },
      fixturePath: fixture('chat-completions'),
    },
    {
      name: 'chat.completions streaming',
      agentName: null,
      tokenIds: true,
      explicit: async (env) => void (await runChatAgent(client(env), env.model, true)),
      fixturePath: fixture('chat-completions-stream'),
    },
    {
      name: 'responses',
      agentName: null,
      propagatesHeaders: true,
      explicit: async (env) => void (await runResponsesAgent(client(env), env.model)),
      fixturePath: fixture('responses'),
    },
  ],
});
