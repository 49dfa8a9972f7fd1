import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useTinyServer } from '../__fixtures__/tiny-server-suite';
import { trainToolWeights } from '../__fixtures__/tool-model';
import { DEFAULT_TINY_CONFIG } from '../model/tiny-config';
import { initWeights } from '../model/tiny-weights';
import { WeightStore } from '../model/weight-store';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { startTinyServer } from './tiny-server';

const hi = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }], temperature: 0 };

/** v0: the default (larger, untrained) shape, so a long answer takes a while; v1: the small trained model. */
async function swapDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agl-tiny-swap-'));
  const tok = new TinyTokenizer();
  const store = new WeightStore({ dir });
  await store.save({
    weights: initWeights({
      config: { ...DEFAULT_TINY_CONFIG, vocabSize: tok.vocabSize },
      tokenizer: tok.spec,
      seed: 4,
    }),
    version: 'v0',
  });
  await store.save({ weights: await trainToolWeights(), version: 'v1' });
  return dir;
}

const suite = useTinyServer(swapDir, { version: 'v0', samplingSeed: 1 });

describe('weight swap', () => {
  it('gives seedless requests seeds from samplingSeed, the prompt and its repeat count, whatever order they arrive in', async () => {
    const ask = async (c: OpenAI, content: string): Promise<string> => {
      const answer = await c.chat.completions.create({
        ...hi,
        messages: [{ role: 'user', content }],
        temperature: 1,
        max_tokens: 12,
      });
      return answer.choices[0]!.message.content ?? '';
    };
    // This server: a, b, a. A second server with the same samplingSeed: b, a, a (all in flight at once).
    const first = [await ask(suite.client, 'a'), await ask(suite.client, 'b'), await ask(suite.client, 'a')];
    const other = await startTinyServer({ weightsDir: suite.dir, version: 'v0', samplingSeed: 1 });
    try {
      const otherClient = new OpenAI({ baseURL: `${other.url}/v1`, apiKey: 'unused' });
      const b = ask(otherClient, 'b');
      const [a1, a2] = [await ask(otherClient, 'a'), await ask(otherClient, 'a')];
      expect([a1, await b, a2]).toEqual(first);
    } finally {
      await other.close();
    }
    expect(first[0]).not.toBe(first[2]); // the second sample of a prompt is drawn with another seed
  });

  it('keeps an in-flight request on its version, serves the new version after the swap, and stays responsive', async () => {
    const long = { ...hi, max_tokens: 400 };
    const reference = await suite.client.chat.completions.create(long);
    expect(reference.choices[0]!.finish_reason).toBe('length');

    const stream = await suite.client.chat.completions.create({
      ...long,
      stream: true,
      return_token_ids: true,
    } as OpenAI.ChatCompletionCreateParamsStreaming);
    const iter = stream[Symbol.asyncIterator]();
    const first = await iter.next();
    expect(first.value.model).toBe('agl-tiny@v0');
    let finished = false;
    let text = '';
    const models = new Set<string>();
    const drain = (async () => {
      for (let r = await iter.next(); !r.done; r = await iter.next()) {
        models.add(r.value.model);
        text += r.value.choices[0]?.delta.content ?? '';
      }
      finished = true;
    })();

    // While the worker generates, the HTTP thread answers at once, and the swap completes.
    const health = await fetch(`${suite.server.url}/health`);
    expect(health.status).toBe(200);
    expect(finished).toBe(false);
    const served = await suite.server.loadWeights('v1');
    expect(served.modelId).toBe('agl-tiny@v1');
    expect(finished).toBe(false);
    const after = await suite.client.chat.completions.create(hi);
    expect(after.model).toBe('agl-tiny@v1');
    expect(after.choices[0]!.message.content).toBe('Hello there! ✓');

    await drain;
    expect([...models]).toEqual(['agl-tiny@v0']);
    expect(text).toBe(reference.choices[0]!.message.content);

    // Older versions stay loadable, over HTTP too.
    const res = await fetch(`${suite.server.url}/v1/weights/load`, {
      method: 'POST',
      body: JSON.stringify({ version: 'v0' }),
    });
    expect(await res.json()).toEqual({ version: 'v0', model: 'agl-tiny@v0' });
    const again = await suite.client.chat.completions.create(long);
    expect(again.choices[0]!.message.content).toBe(reference.choices[0]!.message.content);
    expect(await (await fetch(`${suite.server.url}/v1/weights`)).json()).toEqual({
      current: 'v0',
      model: 'agl-tiny@v0',
      versions: ['v0', 'v1'],
    });
    const missing = await fetch(`${suite.server.url}/v1/weights/load`, {
      method: 'POST',
      body: JSON.stringify({ version: 'v9' }),
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { detail: string }).detail).toMatch(/known versions: v0, v1/);
  });

  it('batches concurrent requests and gives each the answer it gets alone', async () => {
    await suite.server.loadWeights('v1');
    const alone = await suite.client.chat.completions.create({ ...hi, temperature: 1, seed: 5, max_tokens: 20 });
    const many = await Promise.all(
      Array.from({ length: 6 }, () =>
        suite.client.chat.completions.create({ ...hi, temperature: 1, seed: 5, max_tokens: 20 }),
      ),
    );
    for (const r of many) expect(r.choices[0]!.message.content).toBe(alone.choices[0]!.message.content);
  });
});
