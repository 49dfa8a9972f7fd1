import type { Span } from '@agl/core';
import { TraceToTransitions } from '@agl/core/transitions';
import {
  ATTR_AGENT_NAME,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_PROMPT_TOKEN_IDS,
  ATTR_TOOL_NAME,
  SPAN_CHAT_COMPLETION,
} from '@agl/core/semconv';
import { getAglTracer, withoutRecording, withRolloutContext } from '@agl/core/tracer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer } from '../openai-test-server/openai-test-server';
import type { OpenAiTestServer } from '../openai-test-server/types';
import { updatingFixtures, writeJsonFixture } from '../fixture-files';
import { assertFailingRunSpans, failingWeatherRespond } from './failing-run';
import { describeFailureCases, hangingWeatherRespond } from './failure-modes';
import {
  runInProduction,
  runPreloaded,
  runUntraced,
  withServedStore,
  type PreloadProgram,
  type StoreServing,
} from './preload-runs';
import { stableRun, type NodeRun } from './run-node';
import {
  ancestorsOf,
  expectedWeatherTransitions,
  normalizeTransitions,
  WEATHER_TASK,
  weatherRespond,
} from './weather-script';

/** Where the agent under test finds the fake model. */
export interface AdapterConformanceEnv {
  /** OpenAI-style base URL (`…/v1`) of the test server. */
  baseURL: string;
  apiKey: string;
  model: string;
}

/** One way of running the weather agent with one framework. */
export interface AdapterConformanceTarget {
  /** Test title, e.g. `createAgent`. */
  name: string;
  /** Agent name every transition must carry (`null` when the framework has no agent, e.g. the plain client). */
  agentName: string | null;
  /** The system prompt must appear in the transitions' state (default true). */
  systemPrompt?: boolean;
  /** Token ids (vLLM `return_token_ids`) must reach the transitions. */
  tokenIds?: boolean;
  /** Explicit form: runs the agent with the adapter's one-liner; the suite wraps it in a rollout context. */
  explicit?: (env: AdapterConformanceEnv) => Promise<void>;
  /**
   * Preload form: `agentFile` is an untraced agent (it reads `OPENAI_BASE_URL` / `OPENAI_API_KEY` / `AGL_TEST_MODEL`
   * and prints the answer); it runs once as is and once with `--import <register>`.
   */
  preload?: { agentFile: string; register: string; args?: string[]; cwd?: string };
  /** The adapter adds `traceparent` + `x-rollout-id` / `x-attempt-id` to the LLM requests (explicit form). */
  propagatesHeaders?: boolean;
  /** When set and `AGL_UPDATE_FIXTURES=1`, the explicit run's spans are written there as JSON (a plain run never writes). */
  fixturePath?: string;
}

/** Options of {@link describeAdapterConformance}. */
export interface AdapterConformanceOptions {
  /** Suite title, e.g. `@agl/langchain`. */
  name: string;
  /** A fresh store per test (@agl/testing cannot depend on @agl/store: spread `memoryStoreServing(...)`). */
  createStore: StoreServing['createStore'];
  /** Serves a store over HTTP for the preload form. */
  serveStore?: StoreServing['serveStore'];
  targets: AdapterConformanceTarget[];
  /** Per-test timeout in ms (default 120 000; child processes load whole frameworks). */
  timeoutMs?: number;
}

/** Checks the spans of one weather run: transitions, agent names, tree structure, token ids. */
export function assertWeatherSpans(spans: Span[], target: AdapterConformanceTarget): void {
  const transitions = new TraceToTransitions().transitions(spans);
  expect(normalizeTransitions(transitions)).toEqual(expectedWeatherTransitions(target.agentName));
  if (target.systemPrompt ?? true) {
    for (const t of transitions)
      expect(t.state.messages[0]).toMatchObject({ role: 'system', content: WEATHER_TASK.system });
  }
  if (target.tokenIds) {
    for (const t of transitions) {
      expect(t.state.tokenIds?.length).toBeGreaterThan(0);
      expect(t.action.tokenIds?.length).toBeGreaterThan(0);
    }
    expect(spans.some((s) => Array.isArray(s.attributes[ATTR_PROMPT_TOKEN_IDS]))).toBe(true);
  }
  const llm = spans.filter((s) => s.name === SPAN_CHAT_COMPLETION);
  expect(llm).toHaveLength(2);
  if (target.agentName === null) return;
  const agent = spans.find((s) => s.attributes[ATTR_AGENT_NAME] === target.agentName);
  expect(agent?.attributes[ATTR_GEN_AI_AGENT_NAME]).toBe(target.agentName);
  const tool = spans.find((s) => s.attributes[ATTR_TOOL_NAME] === WEATHER_TASK.tool);
  for (const s of [...llm, tool]) {
    expect(s, 'an LLM span and a get_weather tool span').toBeDefined();
    expect(ancestorsOf(s!, spans).map((a) => a.spanId)).toContain(agent!.spanId);
  }
}

type PreloadTarget = NonNullable<AdapterConformanceTarget['preload']>;
type ServeStore = NonNullable<AdapterConformanceOptions['serveStore']>;

/**
 * The shared adapter conformance suite (issue 5): each target drives its framework's real package against
 * {@link startOpenAiTestServer} through a two-step tool-using agent (call `get_weather`, then answer), and the spans
 * must give the same normalised transitions through `TraceToTransitions` for every adapter, in the explicit form and in
 * the preload form (the same untraced agent file, run with `--import <register>`).
 *
 * The failing-run leg (issue 43) runs the same agent against a model that answers 400 after the tool result: the
 * explicit form must keep every span of the rollout that threw; the preload form must exit with the same code and print
 * exactly what the untraced run prints, and its spans (the open agent span closed with an error) must reach the store.
 */
export function describeAdapterConformance(options: AdapterConformanceOptions): void {
  const timeout = options.timeoutMs ?? 120_000;
  let untracedChecked = false;
  // The failure cases (five ways to end badly, three runs each) run for the suite's first preload target.
  let failureCasesAdded = false;
  describe(`adapter conformance: ${options.name}`, () => {
    let llm: OpenAiTestServer;
    let failingLlm: OpenAiTestServer;
    let hangingLlm: OpenAiTestServer;
    let sigterm: (() => void) | null = null;
    let env: AdapterConformanceEnv;
    let failingEnv: AdapterConformanceEnv;

    beforeAll(async () => {
      llm = await startOpenAiTestServer({ respond: weatherRespond });
      failingLlm = await startOpenAiTestServer({ respond: failingWeatherRespond });
      hangingLlm = await startOpenAiTestServer({
        respond: hangingWeatherRespond(() => {
          const kill = sigterm;
          sigterm = null;
          kill?.();
        }),
      });
      env = { baseURL: llm.baseURL, apiKey: 'sk-agl-test', model: WEATHER_TASK.model };
      failingEnv = { ...env, baseURL: failingLlm.baseURL };
    });
    afterAll(async () => {
      await llm.close();
      await failingLlm.close();
      await hangingLlm.close();
    });

    /** The environment of the agent file: the test model at `baseURL`. */
    const agentEnv = (baseURL: string): NodeJS.ProcessEnv => ({
      OPENAI_BASE_URL: baseURL,
      OPENAI_API_KEY: env.apiKey,
      AGL_TEST_MODEL: env.model,
      NODE_ENV: 'test',
    });
    /** The agent file with the preload's flags, against `baseURL`. */
    const program = (preload: PreloadTarget, baseURL: string): PreloadProgram => ({
      args: [preload.agentFile, ...(preload.args ?? [])],
      register: preload.register,
      env: agentEnv(baseURL),
      cwd: preload.cwd,
    });
    /** Runs the agent file untraced against `baseURL`. */
    const runPlain = (preload: PreloadTarget, baseURL: string): Promise<NodeRun> =>
      runUntraced(program(preload, baseURL));
    /** Runs the agent file with the preload against `baseURL`, recording into a served store: the run and its spans. */
    const runPreloadedAgent = (
      preload: PreloadTarget,
      serveStore: ServeStore,
      baseURL: string,
    ): Promise<{ run: NodeRun; spans: Span[] }> =>
      withServedStore({ createStore: options.createStore, serveStore }, (served) =>
        runPreloaded(program(preload, baseURL), served, { task: WEATHER_TASK.user }),
      );

    for (const target of options.targets) {
      if (target.explicit) {
        const run = target.explicit;
        it(`${target.name}: explicit form gives the expected transitions`, { timeout }, async () => {
          const store = options.createStore();
          const rollout = await store.startRollout({ input: { task: WEATHER_TASK.user } });
          const before = llm.requests.length;
          await withRolloutContext({ rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store }, () =>
            run(env),
          );
          await getAglTracer().forceFlush();
          const spans = (await store.querySpans({ rolloutId: rollout.rolloutId })).items;
          if (target.fixturePath && updatingFixtures()) writeJsonFixture(target.fixturePath, spans);
          assertWeatherSpans(spans, target);
          if (target.propagatesHeaders) {
            const sent = llm.requests.slice(before);
            const llmSpanIds = new Set(spans.filter((s) => s.name === SPAN_CHAT_COMPLETION).map((s) => s.spanId));
            expect(sent.length).toBeGreaterThan(0);
            for (const request of sent) {
              expect(request.headers['x-rollout-id']).toBe(rollout.rolloutId);
              expect(request.headers['x-attempt-id']).toBe(rollout.attempt.attemptId);
              const parentSpanId = String(request.headers.traceparent ?? '').split('-')[2];
              expect(llmSpanIds.has(parentSpanId ?? ''), 'traceparent names the LLM span').toBe(true);
            }
          }
        });
      }
      if (target.explicit) {
        const run = target.explicit;
        // What `observe` does with a request it leaves unrecorded (sampled out, buffer full, no store).
        it(
          `${target.name}: inside withoutRecording the agent runs as without AGL (no span started, no trace header)`,
          { timeout },
          async () => {
            const store = options.createStore();
            const rollout = await store.startRollout({ input: { task: WEATHER_TASK.user } });
            const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };
            const before = llm.requests.length;
            const unowned = getAglTracer().stats().unowned;
            await withRolloutContext(ctx, () => withoutRecording(() => run(env)));
            await getAglTracer().forceFlush();
            expect((await store.querySpans({ rolloutId: rollout.rolloutId })).items).toEqual([]);
            expect(getAglTracer().stats().unowned, 'spans the adapter started and nothing owned').toBe(unowned);
            const sent = llm.requests.slice(before);
            expect(sent, 'the tool call, then the answer').toHaveLength(2);
            for (const request of sent) {
              expect(request.headers.traceparent).toBeUndefined();
              expect(request.headers['x-rollout-id']).toBeUndefined();
            }
          },
        );
      }
      const preload = target.preload;
      const serve = options.serveStore;
      if (preload && serve) {
        it(
          `${target.name}: the untraced agent file, run with --import ${preload.register}, gives the same transitions`,
          { timeout },
          async () => {
            if (!untracedChecked) {
              // The same file, untraced, is an ordinary working agent (checked once per suite to save CPU).
              untracedChecked = true;
              const plain = await runPlain(preload, env.baseURL);
              expect(plain.code, plain.stderr).toBe(0);
              expect(plain.stdout).toContain(WEATHER_TASK.answer);
            }
            const { run: traced, spans } = await runPreloadedAgent(preload, serve, env.baseURL);
            expect(traced.code, traced.stderr).toBe(0);
            expect(traced.stdout).toContain(WEATHER_TASK.answer);
            assertWeatherSpans(spans, target);
          },
        );
      }
      if (target.explicit) {
        const run = target.explicit;
        it(
          `${target.name}: failing run (400 from the model mid-run), explicit form keeps every span`,
          { timeout },
          async () => {
            const store = options.createStore();
            const rollout = await store.startRollout({ input: { task: WEATHER_TASK.user } });
            const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };
            // Most frameworks reject; some report the error another way (streamText's onError) and resolve. On a
            // rejection, do what the runner does: close the spans the rollout left open, then flush.
            await withRolloutContext(ctx, () => run(failingEnv)).catch((error: unknown) => {
              getAglTracer().closeOpenSpans(`the rollout failed: ${String(error)}`, ctx);
            });
            await getAglTracer().forceFlush();
            assertFailingRunSpans((await store.querySpans({ rolloutId: rollout.rolloutId })).items, target.agentName);
          },
        );
      }
      if (preload && serve) {
        it(
          `${target.name}: in production mode (--import ${preload.register}, AGL_STORE_URL only) the run is one rollout with the same transitions`,
          { timeout },
          async () => {
            const { run, rollouts } = await withServedStore(
              { createStore: options.createStore, serveStore: serve },
              (served) => runInProduction(program(preload, env.baseURL), served),
            );
            expect(run.code, run.stderr).toBe(0);
            expect(run.stdout).toContain(WEATHER_TASK.answer);
            for (const r of rollouts) {
              expect(r.rollout).toMatchObject({ status: 'succeeded', mode: null, metadata: { source: 'unscoped' } });
            }
            // An agent run is one rollout holding all its calls; a plain client's calls are a rollout each.
            expect(rollouts).toHaveLength(target.agentName === null ? 2 : 1);
            assertWeatherSpans(
              rollouts.flatMap((r) => r.spans),
              target,
            );
          },
        );
      }
      if (preload && serve && !failureCasesAdded) {
        failureCasesAdded = true;
        describeFailureCases({
          name: target.name,
          agentName: target.agentName,
          preload,
          serving: { createStore: options.createStore, serveStore: serve },
          agentEnv,
          failingLlm: () => failingLlm,
          hangingLlm: () => hangingLlm,
          armSigterm: (kill) => (sigterm = kill),
          timeoutMs: timeout,
        });
      }
      if (preload && serve) {
        it(
          `${target.name}: failing run with --import ${preload.register} exits and prints as without it, spans stored`,
          { timeout },
          async () => {
            const plain = await runPlain(preload, failingEnv.baseURL);
            const { run: traced, spans } = await runPreloadedAgent(preload, serve, failingEnv.baseURL);
            expect(stableRun(traced)).toEqual(stableRun(plain));
            assertFailingRunSpans(spans, target.agentName);
          },
        );
      }
    }
  });
}
