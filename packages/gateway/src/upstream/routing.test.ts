import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayFixture, lastBackendBody, spansOf, startGatewayFixture } from '../__fixtures__/gateway-fixture';

describe('gateway routing by resources and overrides', () => {
  let fx: GatewayFixture;
  let policyV1: OpenAiTestServer;
  let policyV2: OpenAiTestServer;

  beforeAll(async () => {
    policyV1 = await startOpenAiTestServer({ apiKey: 'v1-key' });
    policyV2 = await startOpenAiTestServer();
    // The policy servers are other origins than the configured backend: the gateway calls them only when allowed.
    fx = await startGatewayFixture({
      gateway: { allowBackends: [new URL(policyV1.baseURL).origin, new URL(policyV2.baseURL).origin] },
    });
  });
  afterAll(async () => {
    await fx.close();
    await policyV1.close();
    await policyV2.close();
  });

  const call = async (rolloutId: string, attemptId: string, extra: Record<string, unknown> = {}): Promise<void> => {
    const client = new OpenAI({
      baseURL: `${fx.gateway.url}/rollout/${rolloutId}/attempt/${attemptId}/v1`,
      apiKey: 'x',
      maxRetries: 0,
    });
    await client.chat.completions.create({
      model: 'agent-asks-this',
      messages: [{ role: 'user', content: 'hi' }],
      temperature: 0.2,
      ...extra,
    });
  };

  it('uses the configured backend when there are no resources', async () => {
    await call(fx.rollout.rolloutId, fx.rollout.attempt.attemptId);
    expect(lastBackendBody(fx.llm).model).toBe('agent-asks-this');
  });

  it('routes by the rollout’s pinned resources, else the latest, with the resource’s model and (on training calls) sampling', async () => {
    const v1 = await fx.store.addResources({
      main_llm: {
        resourceType: 'llm',
        endpoint: policyV1.baseURL,
        model: 'policy-v1',
        apiKey: 'v1-key',
        samplingParameters: { temperature: 0.9 },
      },
    });
    await fx.store.addResources({ main_llm: { resourceType: 'llm', endpoint: policyV2.baseURL, model: 'policy-v2' } });

    const pinned = await fx.store.startRollout({ input: null, mode: 'train', resourcesId: v1.resourcesId });
    await call(pinned.rolloutId, pinned.attempt.attemptId);
    expect(policyV1.requests.at(-1)!.body).toMatchObject({
      model: 'policy-v1',
      temperature: 0.9,
      return_token_ids: true,
    });
    expect(policyV1.requests.at(-1)!.headers.authorization).toBe('Bearer v1-key');
    const span = (await spansOf(fx.store, pinned.rolloutId))[0]!;
    expect(span.attributes).toMatchObject({ 'gen_ai.request.model': 'policy-v1', 'gen_ai.request.temperature': 0.9 });

    const latest = await fx.store.startRollout({ input: null, mode: 'val' });
    await fx.store.updateRollout(latest.rolloutId, { resourcesId: null });
    await call(latest.rolloutId, latest.attempt.attemptId);
    expect(policyV2.requests.at(-1)!.body).toMatchObject({ model: 'policy-v2', temperature: 0.2 });
    expect(policyV2.requests.at(-1)!.body).not.toHaveProperty('return_token_ids');
  });

  it('applies the trainer’s overrides to training calls only', async () => {
    fx.gateway.setTrainOverrides({ model: 'policy-step-7', sampling: { temperature: 1, top_p: 0.95 } });
    try {
      const train = await fx.store.startRollout({ input: null, mode: 'train' });
      await call(train.rolloutId, train.attempt.attemptId);
      expect(policyV2.requests.at(-1)!.body).toMatchObject({ model: 'policy-step-7', temperature: 1, top_p: 0.95 });
      const val = await fx.store.startRollout({ input: null, mode: 'val' });
      await call(val.rolloutId, val.attempt.attemptId);
      expect(policyV2.requests.at(-1)!.body).toMatchObject({ model: 'policy-v2', temperature: 0.2 });
    } finally {
      fx.gateway.setTrainOverrides({});
    }
  });

  it('does not follow an LLM resource that points back at the gateway', async () => {
    await fx.store.addResources({
      main_llm: { resourceType: 'llm', endpoint: `${fx.gateway.url}/v1`, model: 'loop-model' },
    });
    const r = await fx.store.startRollout({ input: null, mode: 'val' });
    await call(r.rolloutId, r.attempt.attemptId);
    expect(lastBackendBody(fx.llm).model).toBe('loop-model');
  });
});
