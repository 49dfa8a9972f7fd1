import { BudgetExceededError, HttpError } from '@agl/core/errors';
import { startOpenAiTestServer } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { ChatClient } from './chat-client';

const noSleep = (): Promise<void> => Promise.resolve();

describe('ChatClient', () => {
  it('retries 429 and 5xx answers, then returns the first choice and counts tokens', async () => {
    let n = 0;
    const llm = await startOpenAiTestServer({
      respond: () =>
        ++n === 1
          ? { error: { status: 429, message: 'slow down' } }
          : n === 2
            ? { error: { status: 503, message: 'busy' } }
            : { content: 'fine' },
    });
    try {
      const client = new ChatClient({ baseURL: llm.baseURL, sleep: noSleep });
      expect(await client.complete({ model: 'm', messages: [{ role: 'user', content: 'hi there' }] })).toBe('fine');
      expect(client.usage).toMatchObject({ calls: 1, retries: 2 });
      expect(client.usage.promptTokens).toBeGreaterThan(0);
      expect(client.usage.completionTokens).toBeGreaterThan(0);
    } finally {
      await llm.close();
    }
  });

  it('does not retry a 400 and throws an HttpError naming the status', async () => {
    const llm = await startOpenAiTestServer({ respond: () => ({ error: { status: 400, message: 'bad model' } }) });
    try {
      const client = new ChatClient({ baseURL: llm.baseURL, sleep: noSleep });
      const err = await client
        .complete({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e);
      expect(HttpError.isInstance(err)).toBe(true);
      expect((err as HttpError).status).toBe(400);
      expect(llm.requests).toHaveLength(1);
    } finally {
      await llm.close();
    }
  });

  it('stops at the token and cost budgets', async () => {
    const llm = await startOpenAiTestServer({ respond: () => ({ content: 'a reply of several words' }) });
    try {
      const tokens = new ChatClient({ baseURL: llm.baseURL, maxTotalTokens: 5 });
      await tokens.complete({ model: 'm', messages: [{ role: 'user', content: 'one two three' }] });
      const err = await tokens
        .complete({ model: 'm', messages: [{ role: 'user', content: 'again' }] })
        .catch((e: unknown) => e);
      expect(BudgetExceededError.isInstance(err)).toBe(true);
      expect((err as BudgetExceededError).budget).toBe('tokens');
      const cost = new ChatClient({
        baseURL: llm.baseURL,
        maxCostUsd: 1e-9,
        pricing: { inputPerMillion: 1, outputPerMillion: 1 },
      });
      await cost.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
      expect(cost.usage.costUsd).toBeGreaterThan(0);
      await expect(cost.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }] })).rejects.toThrow(
        /cost budget/u,
      );
      expect(llm.requests).toHaveLength(2);
    } finally {
      await llm.close();
    }
  });

  it('keeps at most maxConcurrency requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const llm = await startOpenAiTestServer({
      respond: async () => {
        inFlight += 1;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        await new Promise((resolve) => setTimeout(resolve, 5));
        inFlight -= 1;
        return { content: 'ok' };
      },
    });
    try {
      const client = new ChatClient({ baseURL: llm.baseURL, maxConcurrency: 2 });
      await Promise.all(
        Array.from({ length: 8 }, () => client.complete({ model: 'm', messages: [{ role: 'user', content: 'x' }] })),
      );
      expect(peak).toBe(2);
      expect(client.usage.calls).toBe(8);
    } finally {
      await llm.close();
    }
  });
});
