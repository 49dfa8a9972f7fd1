import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { autogenTraceAdapter } from '@agl/autogen';
import type { LightningStore, NamedResourcesInput, Rollout, Trajectory } from '@agl/core';
import { Baseline, processAgent, Trainer } from '@agl/trainer';

/** One math word problem with its numeric answer. */
export interface MathTask {
  id: string;
  question: string;
  answer: string;
}

const here = (path: string): string => fileURLToPath(new URL(`../${path}`, import.meta.url));

/** The shipped tasks (`tasks.json`). */
export const MATH_TASKS: readonly MathTask[] = JSON.parse(readFileSync(here('tasks.json'), 'utf8')) as MathTask[];
/** The real Python agent (needs `pip install -r requirements.txt`). */
export const TEAM_SCRIPT = here('python/team.py');
/** The stand-in that replays recorded OTLP exports (Python standard library only). */
export const REPLAY_SCRIPT = here('python/replay_otlp.py');
/** The recorded OTLP/JSON exports, one per task (synthetic: see the README). */
export const OTLP_FIXTURE = here('fixtures/autogen-math-team.otlp.json');

/** Options of {@link trainAutogenTeam}. */
export interface AutogenTeamOptions {
  /** `replay` runs `replay_otlp.py` on the fixture; `team` runs `team.py` (AutoGen must be installed). */
  python: 'replay' | 'team';
  /** A store instance, a store URL, or a SQLite path. */
  store: LightningStore | string;
  tasks?: readonly MathTask[];
  /** The agent whose calls become transitions (default `solver`). */
  agentMatch?: string | RegExp;
  nRunners?: number;
  /** The LLM the team calls (`AGL_OPENAI_BASE_URL`); only `team` mode needs it. */
  llm?: { endpoint: string; model: string; apiKey?: string };
  /** Route the team's LLM calls through a loopback AGL gateway (token ids for training; `team` mode). */
  gateway?: boolean;
  python3?: string;
}

/** What {@link trainAutogenTeam} returns. */
export interface AutogenTeamResult {
  /** The trajectories of `agentMatch`'s calls, one per rollout, in completion order. */
  trajectories: Trajectory[];
  rollouts: Rollout[];
  meanReward: number;
}

/**
 * The TypeScript trainer side: run the Python team once per task as a process agent under the AGL env contract (the
 * runner serves the store on loopback, so the team's OTLP exporter and reward post have URLs), and turn the spans it
 * sent into transitions of one agent with `autogenTraceAdapter({ agentMatch })`.
 */
export async function trainAutogenTeam(o: AutogenTeamOptions): Promise<AutogenTeamResult> {
  const script = o.python === 'replay' ? [REPLAY_SCRIPT, OTLP_FIXTURE] : [TEAM_SCRIPT];
  const baseline = new Baseline();
  const initialResources: NamedResourcesInput | undefined = o.llm
    ? { llm: { resourceType: 'llm', endpoint: o.llm.endpoint, model: o.llm.model, apiKey: o.llm.apiKey ?? null } }
    : undefined;
  await new Trainer({
    store: o.store,
    nRunners: o.nRunners ?? 2,
    algorithm: baseline,
    adapter: autogenTraceAdapter({ agentMatch: o.agentMatch ?? 'solver' }),
    gateway: o.gateway,
    initialResources,
  }).fit(
    processAgent({
      command: o.python3 ?? 'python3',
      args: script,
      env: {
        OTEL_SEMCONV_STABILITY_OPT_IN: 'gen_ai_latest_experimental',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'span_only',
        ...(o.llm ? { AGL_MODEL: o.llm.model } : {}),
      },
    }),
    { train: [...(o.tasks ?? MATH_TASKS)] },
  );
  const rewards = baseline.trajectories.map((t) => t.finalReward ?? 0);
  return {
    trajectories: baseline.trajectories,
    rollouts: baseline.rollouts,
    meanReward: rewards.reduce((a, b) => a + b, 0) / Math.max(1, rewards.length),
  };
}
