import { MAX_JSON_DEPTH } from '@agl/core/schema';
import { MemoryStore } from '@agl/store';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type Gateway } from '../server/gateway-server';

/** Found by the fuzzing in tools/reliability: a deeply nested body was a 500 (stack overflow), now a 400. */
describe('hostile input', () => {
  let llm: OpenAiTestServer;
  let gateway: Gateway;
  beforeAll(async () => {
    llm = await startOpenAiTestServer();
    gateway = await startGateway({ store: new MemoryStore(), backend: llm.baseURL, port: 0 });
  });
  afterAll(async () => {
    await gateway.close();
    await llm.close();
  });

  it('refuses a body nested deeper than the limit with a 400 and a detail', async () => {
    const deep = '['.repeat(50_000) + ']'.repeat(50_000);
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"model":"m","messages":[{"role":"user","content":${deep}}]}`,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { detail: string }).detail).toContain(`limit is ${MAX_JSON_DEPTH}`);
    expect(llm.requests).toHaveLength(0);
  });
});
