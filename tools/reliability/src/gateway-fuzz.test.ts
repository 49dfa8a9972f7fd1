import fc from 'fast-check';
import { startGateway, type Gateway } from '@agl/gateway';
import { MemoryStore } from '@agl/store';
import { startOpenAiTestServer, type OpenAiTestServer } from '@agl/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFuzzAgent, FUZZ_BATCH, FUZZ_SEED, fuzzBatches, problemsOf, type FuzzResponse } from './harness/fuzz-http';
import { gatewayArbitraries } from './harness/gateway-arbitraries';

const TOKEN = 'gateway-fuzz-token';
/** 3,600 requests against the gateway (with the store fuzz: over 10,000 in total). */
const RUNS = Number(process.env.AGL_FUZZ_GATEWAY_RUNS ?? 450);
const FAILING: Record<string, number> = { 'fail-500': 500, 'fail-502': 502, 'fail-503': 503, 'fail-429': 429 };

/** A 5xx is allowed only when the backend produced it, and the gateway says so in a header and the body. */
function labelledAsBackend(res: FuzzResponse): boolean {
  return (
    res.headers['x-agl-error-source'] === 'backend' &&
    (res.json as { agl_error_source?: unknown } | undefined)?.agl_error_source === 'backend'
  );
}

describe('fuzzing the gateway in front of the OpenAI test server (fast-check, real HTTP on 127.0.0.1)', () => {
  let store: MemoryStore;
  let llm: OpenAiTestServer;
  let gateway: Gateway;
  let arbs: ReturnType<typeof gatewayArbitraries>;
  let owners: { rolloutId: string; attemptId: string }[];

  beforeAll(async () => {
    store = new MemoryStore();
    llm = await startOpenAiTestServer({
      respond: (request) =>
        FAILING[request.model]
          ? { error: { status: FAILING[request.model]!, message: `scripted ${request.model}` } }
          : { content: 'ok' },
    });
    gateway = await startGateway({ store, backend: llm.baseURL, token: TOKEN, port: 0, maxBodyBytes: 512 * 1024 });
    owners = [];
    for (let i = 0; i < 3; i++) {
      const r = await store.startRollout({ input: i, mode: 'train' });
      owners.push({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId });
    }
    arbs = gatewayArbitraries({ token: TOKEN, owners, failingModels: FAILING });
  });
  afterAll(async () => {
    closeFuzzAgent();
    await gateway?.close();
    await llm?.close();
    await store?.close();
  });

  it('never answers an unlabelled 5xx, refuses bad input with a 4xx JSON detail, and records a span only per accepted rollout call', async () => {
    const before = (await store.statistics()).totalSpans;
    let acceptedScoped = 0;
    let backend5xx = 0;
    const request = fc.oneof(...arbs.valid, ...arbs.backendFail, ...arbs.invalid, ...arbs.unknown);
    const sent = await fuzzBatches({
      baseUrl: gateway.url,
      request,
      numRuns: RUNS,
      seed: FUZZ_SEED,
      check: (req, res) => {
        const scopedToOwner = owners.some((o) => req.path.includes(`/rollout/${o.rolloutId}/attempt/${o.attemptId}/`));
        if (res.status >= 200 && res.status < 300 && req.method === 'POST' && scopedToOwner) acceptedScoped += 1;
        const fromBackend = req.kind === 'backend-fail' && labelledAsBackend(res);
        const own = problemsOf(req, res, () => fromBackend, fromBackend);
        if (req.kind === 'backend-fail') {
          const model = (JSON.parse(req.body as string) as { model: string }).model;
          if (res.status !== FAILING[model])
            own.push(`backend ${FAILING[model]} passed through as ${res.status}: ${res.text.slice(0, 160)}`);
          else if (!labelledAsBackend(res))
            own.push(
              `backend error not labelled as the backend's: ${JSON.stringify(res.headers)} ${res.text.slice(0, 160)}`,
            );
          if (res.status >= 500) backend5xx += 1;
        } else if (labelledAsBackend(res)) own.push(`${req.kind} got a backend-labelled answer ${res.status}`);
        if (req.kind === 'gateway-bad-token' && res.status !== 401)
          own.push(`bad gateway token answered ${res.status}: ${req.path}`);
        return own;
      },
    });

    expect(sent).toBeGreaterThanOrEqual(RUNS * FUZZ_BATCH);
    expect(backend5xx, 'the run exercised backend 5xx pass-through').toBeGreaterThan(0);
    await gateway.drained();
    // Each accepted call scoped to a rollout stored exactly one span; nothing else reached the store.
    expect((await store.statistics()).totalSpans - before).toBe(acceptedScoped);
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
  });
});
