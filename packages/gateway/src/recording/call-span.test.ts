import type { Span, SpanInput } from '@agl/core/schema';
import { ATTR_GEN_AI_SYSTEM, promptKey } from '@agl/core/semconv';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it } from 'vitest';
import { BackendEndpoint } from '../upstream/backend-endpoint';
import type { CallPlan } from '../upstream/call-plan';
import { prepareUpstreamBody } from '../upstream/upstream-body';
import { SPAN_PREP_DELAY_MS, SpanPrep } from './call-span';
import { StoreBatcher } from './store-batcher';

/** A real memory store that logs its sequence-id calls. */
class CountingStore extends MemoryStore {
  calls: string[] = [];

  override async getNextSpanSequenceId(rolloutId: string, attemptId: string): Promise<number> {
    this.calls.push('getNextSpanSequenceId');
    return super.getNextSpanSequenceId(rolloutId, attemptId);
  }

  override async addSpan(span: SpanInput): Promise<Span | null> {
    this.calls.push('addSpan');
    return super.addSpan(span);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const target = {
  endpoint: BackendEndpoint.parse('http://127.0.0.1:9/v1') as BackendEndpoint,
  apiKey: null,
  model: null,
  sampling: {},
  resourcesId: null,
};

function chatPlan(scope: CallPlan['scope']): CallPlan {
  const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
  return {
    kind: 'chat',
    scope,
    target,
    prepared: prepareUpstreamBody(
      'chat',
      body,
      { model: null, sampling: {}, collectTokenIds: scope !== null },
      scope !== null,
    ),
    url: target.endpoint.url('chat/completions'),
    stream: false,
  };
}

describe('SpanPrep', () => {
  let store: CountingStore;
  afterEach(() => store.close());

  async function setup(): Promise<{ batcher: StoreBatcher; plan: CallPlan }> {
    store = new CountingStore();
    const r = await store.startRollout({ input: null, mode: 'train' });
    const plan = chatPlan({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, mode: 'train', target });
    return { batcher: new StoreBatcher(store), plan };
  }

  it('takes the sequence id only after the delay, once, and builds the request half of the attributes', async () => {
    const { batcher, plan } = await setup();
    const prep = SpanPrep.start(batcher, plan)!;
    await Promise.resolve();
    expect(store.calls).toEqual([]); // nothing right after the request went out: the backend's wake-up is left alone
    await sleep(SPAN_PREP_DELAY_MS + 20);
    expect(store.calls).toEqual(['getNextSpanSequenceId']);
    const prepared = prep.get();
    expect(await prepared.sequenceId).toBe(1);
    expect(prepared.requestAttributes).toMatchObject({
      [ATTR_GEN_AI_SYSTEM]: 'openai',
      [promptKey(0, 'role')]: 'user',
      [promptKey(0, 'content')]: 'hi',
    });
    expect(prep.get()).toBe(prepared);
    expect(store.calls).toEqual(['getNextSpanSequenceId']);
  });

  it('prepares at once when the answer needs it before the delay, and not again when the delay passes', async () => {
    const { batcher, plan } = await setup();
    const prep = SpanPrep.start(batcher, plan)!;
    expect(await prep.get().sequenceId).toBe(1);
    await sleep(SPAN_PREP_DELAY_MS + 20);
    expect(store.calls).toEqual(['getNextSpanSequenceId']);
  });

  it('does nothing once cancelled, and nothing at all for a call outside a rollout', async () => {
    const { batcher, plan } = await setup();
    SpanPrep.start(batcher, plan)!.cancel();
    expect(SpanPrep.start(batcher, chatPlan(null))).toBeNull();
    await sleep(SPAN_PREP_DELAY_MS + 20);
    expect(store.calls).toEqual([]);
  });
});
