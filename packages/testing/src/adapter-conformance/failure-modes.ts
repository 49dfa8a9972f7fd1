import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import type { Span } from '@agl/core';
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { TraceToTransitions } from '@agl/core/transitions';
import { expect, it } from 'vitest';
import type { OpenAiTestServer, TestLlmReply, TestLlmRequest } from '../openai-test-server/types';
import {
  runInProduction,
  runPreloaded,
  runUntraced,
  withServedStore,
  type PreloadProgram,
  type StoreServing,
} from './preload-runs';
import { stableRun, type NodeRun } from './run-node';
import { WEATHER_TASK } from './weather-script';

/** The ways a program ends badly that every adapter's preload must survive (issue 54), in both modes. */
export const FAILURE_MODES = ['crash', 'exit-in-catch', 'tla', 'unhandled', 'sigterm'] as const;
export type FailureMode = (typeof FAILURE_MODES)[number];

/** The program that runs an agent file and ends it in one of the {@link FAILURE_MODES}. */
export const FAILURE_HARNESS = fileURLToPath(new URL('./failure-harness.ts', import.meta.url));

/**
 * The weather model for the SIGTERM case: it calls `get_weather`, then answers the tool result only after `latencyMs`,
 * calling `onSecondCall` as that request arrives (the test sends SIGTERM then, with the call in flight).
 */
export function hangingWeatherRespond(onSecondCall: () => void, latencyMs = 15_000) {
  return (request: TestLlmRequest): TestLlmReply => {
    if (!request.messages.some((m) => m.role === 'tool')) {
      return { toolCalls: [{ name: WEATHER_TASK.tool, arguments: WEATHER_TASK.toolArgs }] };
    }
    onSecondCall();
    return { content: WEATHER_TASK.answer, latencyMs };
  };
}

/** What one failure case needs from the suite. */
export interface FailureCaseSetup {
  /** Title of the target. */
  name: string;
  agentName: string | null;
  /** The agent file and its preload. */
  preload: { agentFile: string; register: string; args?: string[]; cwd?: string };
  serving: StoreServing;
  /** The environment pointing the agent at `baseURL`. */
  agentEnv: (baseURL: string) => NodeJS.ProcessEnv;
  /** The model that answers 400 after the tool result. */
  failingLlm: () => OpenAiTestServer;
  /** The model that hangs on the call after the tool result (see {@link hangingWeatherRespond}). */
  hangingLlm: () => OpenAiTestServer;
  /** Set by the suite: called when the hanging model gets its second call. */
  armSigterm: (kill: (() => void) | null) => void;
  timeoutMs: number;
}

const llmSpans = (spans: Span[]): Span[] => spans.filter((s) => s.name === SPAN_CHAT_COMPLETION);

/**
 * Registers one test per {@link FAILURE_MODES} for a target: the agent file under the failure harness runs untraced,
 * with the preload in runner mode (`AGL_ROLLOUT_ID` set), and with the preload in production mode (`AGL_STORE_URL`
 * only). Both preloaded runs exit with the code, and print exactly what, the untraced run does. Runner mode stores
 * every call made in the runner's rollout (the runner ends it `failed` from the exit status). Production mode leaves
 * one rollout, ended `failed`, holding every call made, its transitions named after the agent; for a plain client
 * (no agent run to hold the calls) each call is its own rollout and the failed call's rollout is `failed`.
 */
export function describeFailureCases(setup: FailureCaseSetup): void {
  for (const mode of FAILURE_MODES) {
    it(
      `${setup.name}: ${mode} — untraced, runner and production preload: same exit and output; a failed rollout holds every call`,
      { timeout: setup.timeoutMs },
      async () => {
        const llm = mode === 'sigterm' ? setup.hangingLlm() : setup.failingLlm();
        const program: PreloadProgram = {
          args: [FAILURE_HARNESS, mode, setup.preload.agentFile, ...(setup.preload.args ?? [])],
          register: setup.preload.register,
          env: setup.agentEnv(llm.baseURL),
          cwd: setup.preload.cwd,
          onSpawn: (child: ChildProcess) => setup.armSigterm(() => child.kill('SIGTERM')),
        };
        /** Runs `start` and returns its result with how many LLM requests it made. */
        const counted = async <T>(start: () => Promise<T>): Promise<[T, number]> => {
          const before = llm.requests.length;
          const result = await start();
          return [result, llm.requests.length - before];
        };
        const [plain] = await counted(() => runUntraced(program));
        // (On SIGTERM an app's own handler may end the process with 0: the OpenAI Agents SDK's does.)
        if (mode !== 'sigterm') expect(plain.code, `the untraced ${mode} run fails: ${plain.stderr}`).not.toBe(0);

        const [runner, runnerCalls] = await counted(() =>
          withServedStore(setup.serving, (served) => runPreloaded(program, served, { task: WEATHER_TASK.user })),
        );
        expectSameRun(runner.run, plain, 'runner mode');
        expect(llmSpans(runner.spans), 'runner mode: one LLM span per call made').toHaveLength(runnerCalls);
        expect(llmSpans(runner.spans).some((s) => s.status.statusCode === 'ERROR')).toBe(true);

        const [production, productionCalls] = await counted(() =>
          withServedStore(setup.serving, (served) => runInProduction(program, served)),
        );
        expectSameRun(production.run, plain, 'production mode');
        const all = production.rollouts.flatMap((r) => llmSpans(r.spans));
        expect(all, 'production mode: one LLM span per call made').toHaveLength(productionCalls);
        const failedCall = all.find((s) => s.status.statusCode === 'ERROR');
        expect(failedCall, 'the failed (or cut off) call has an ERROR status').toBeDefined();
        const holding = production.rollouts.find((r) => r.rollout.rolloutId === failedCall!.rolloutId)!;
        expect(holding.rollout.status, 'the rollout of the failed call').toBe('failed');
        if (setup.agentName === null) return;
        expect(
          production.rollouts.map((r) => r.rollout.rolloutId),
          'one rollout for the agent run',
        ).toEqual([holding.rollout.rolloutId]);
        const transitions = new TraceToTransitions().transitions(holding.spans);
        expect(transitions.length).toBeGreaterThanOrEqual(1);
        for (const t of transitions)
          expect(t.agentName, 'production-mode transitions name the agent').toBe(setup.agentName);
      },
    );
  }
}

function expectSameRun(traced: NodeRun, plain: NodeRun, what: string): void {
  expect(stableRun(traced), `${what}: same exit code, stdout and stderr as untraced`).toEqual(stableRun(plain));
}
