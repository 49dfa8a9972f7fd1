import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { emitMessage, emitReward, getAglTracer, operation } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  configureObserve,
  observe,
  observedRollout,
  observeFetch,
  observeHandler,
  observeStats,
  shutdownObserve,
} from '../index';
import { close, fakeLlmCall, listen } from './__fixtures__/framework-helpers';

const logger = { warn: () => undefined };

// AGL_SAMPLE_RATE: "the share of requests recorded; the others run untouched". No store configured: the same.
describe.each([
  {
    what: 'left out by sampleRate 0',
    configure: () => configureObserve({ store: new MemoryStore(), sampleRate: 0, logger }),
  },
  {
    what: 'with no store configured',
    configure: () => {
      vi.stubEnv('AGL_STORE_URL', '');
      configureObserve({ logger });
    },
  },
  // `configureObserve({ store: process.env.AGL_STORE_URL })` with the variable set but empty
  { what: 'with an empty store URL', configure: () => configureObserve({ store: '', logger }) },
])('a request $what runs exactly as without AGL', ({ configure }) => {
  const servers: Server[] = [];
  afterEach(async () => {
    vi.unstubAllEnvs();
    await shutdownObserve(1_000);
    for (const server of servers.splice(0)) await close(server);
  });

  it('observeHandler: no header, the server own req and res, the handler error unchanged', async () => {
    configure();
    const seen: { req?: IncomingMessage; res?: ServerResponse } = {};
    const given: { req?: IncomingMessage; res?: ServerResponse } = {};
    const server = createServer();
    server.on('request', (req, res) => Object.assign(seen, { req, res }));
    server.on(
      'request',
      observeHandler(async (req, res) => {
        Object.assign(given, { req, res });
        res.end(await fakeLlmCall('unrecorded'));
      }),
    );
    servers.push(server);
    const response = await fetch(`${await listen(server)}/ask`);
    expect(await response.text()).toBe('answer to unrecorded');
    expect(response.headers.get('x-agl-rollout-id')).toBeNull();
    expect(given.req).toBe(seen.req);
    expect(given.res).toBe(seen.res);
    expect(given.res!.getHeader('x-agl-rollout-id')).toBeUndefined();
    const boom = new Error('handler bug');
    const throwing = observeHandler(() => {
      throw boom;
    });
    await expect(throwing(seen.req!, seen.res!)).rejects.toBe(boom);
  });

  it('observeFetch: the handler own Response is returned as is, and the request is not read', async () => {
    configure();
    const own = new Response('as is', { status: 202 });
    const request = new Request('http://app/chat', { method: 'POST', body: '{"q":"x"}' });
    const clone = vi.spyOn(request, 'clone');
    let given: Request | undefined;
    const response = await observeFetch(async (r: Request) => {
      given = r;
      return own;
    })(request);
    expect(response).toBe(own);
    expect(response.headers.get('x-agl-rollout-id')).toBeNull();
    expect(given).toBe(request);
    expect(clone).not.toHaveBeenCalled();
    expect(await request.text()).toBe('{"q":"x"}');
  });

  it('observe: rollout.recorded is false and the value comes back', async () => {
    configure();
    expect(await observe({ input: 1 }, (rollout) => rollout.recorded)).toBe(false);
    expect(observeStats().recorded).toBe(0);
  });

  it("the app's emitters and operations only run (they throw outside a rollout), and make no span", async () => {
    configure();
    const before = getAglTracer().stats();
    const value = await observe({}, async () => {
      emitReward(1);
      emitMessage('hello');
      return operation('step', async () => 'done');
    });
    expect(value).toBe('done');
    expect(getAglTracer().stats()).toEqual(before);
    expect(() => emitReward(1)).toThrow(/outside a rollout/); // the same call outside observe
  });
});

describe('a request left out by sampling', () => {
  afterEach(() => shutdownObserve(1_000));

  it('is still served with the latest published resources (observedRollout), and counted as sampled out', async () => {
    const store = new MemoryStore();
    const published = await store.addResources({
      system_prompt: { resourceType: 'prompt_template', template: 'Be brief.', engine: 'f-string' },
    });
    configureObserve({ store, sampleRate: 0, logger });
    const request = new Request('http://app/');
    const response = await observeFetch(async (r: Request) => {
      const rollout = observedRollout(r);
      return Response.json({ recorded: rollout?.recorded, resourcesId: rollout?.resourcesId });
    })(request);
    expect(await response.json()).toEqual({ recorded: false, resourcesId: published.resourcesId });
    expect(observeStats()).toMatchObject({ recorded: 0, sampledOut: 1 });
    expect((await store.queryRollouts({})).items).toEqual([]);
  });
});
