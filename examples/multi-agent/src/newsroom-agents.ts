import type { NamedResources } from '@agl/core';
import type { AgentContext, RolloutFn } from '@agl/trainer';
import { Agent, OpenAIChatCompletionsModel, run, withTrace } from '@openai/agents';
import OpenAI from 'openai';
import { headlineReward, MAX_WORDS, type HeadlineTask } from './newsroom-tasks';

/** The writer's instructions (the agent we train). */
export const WRITER_INSTRUCTIONS = `You are the writer. Write one headline of at most ${MAX_WORDS} words for the news item. Reply with the headline only.`;
/** The reviewer's instructions (a fixed agent that is not trained). */
export const REVIEWER_INSTRUCTIONS = `You are the reviewer. Check the headline: at most ${MAX_WORDS} words and it must mention the keyword. Reply APPROVE, or REVISE: followed by the first problem you find.`;

/** Options of {@link newsroomAgents}. */
export interface NewsroomOptions {
  baseURL: string;
  apiKey?: string | null;
  model: string;
  /** Sampling temperature of the writer (the reviewer is always greedy). */
  temperature?: number;
  /** Ask for vLLM-style token ids (vLLM, the AGL gateway, the test server). */
  returnTokenIds?: boolean;
}

/** The two agents: `writer` (trained) and `reviewer` (fixed), both OpenAI Agents JS on the Chat Completions API. */
export function newsroomAgents(o: NewsroomOptions): { writer: Agent; reviewer: Agent } {
  const client = new OpenAI({ baseURL: o.baseURL, apiKey: o.apiKey ?? 'unused', maxRetries: 1 });
  const model = new OpenAIChatCompletionsModel(client, o.model);
  const extra = o.returnTokenIds ? { providerData: { return_token_ids: true } } : {};
  return {
    writer: new Agent({
      name: 'writer',
      instructions: WRITER_INSTRUCTIONS,
      model,
      modelSettings: { temperature: o.temperature ?? 0, ...extra },
    }),
    reviewer: new Agent({
      name: 'reviewer',
      instructions: REVIEWER_INSTRUCTIONS,
      model,
      modelSettings: { temperature: 0, ...extra },
    }),
  };
}

/** What one newsroom run produced. */
export interface NewsroomRun {
  headline: string;
  verdicts: string[];
  revised: boolean;
  reward: number;
}

const text = (output: unknown): string => (typeof output === 'string' ? output.trim() : '');

/** Draft → review → (revise → review): the writer and the reviewer cooperate on one task. */
export async function writeHeadline(
  agents: { writer: Agent; reviewer: Agent },
  task: HeadlineTask,
): Promise<NewsroomRun> {
  return withTrace('newsroom', async () => {
    const brief = `Keyword: ${task.keyword}\nNews item: ${task.item}`;
    let headline = text((await run(agents.writer, brief)).finalOutput);
    const review = async (): Promise<string> =>
      text((await run(agents.reviewer, `${brief}\nHeadline: ${headline}`)).finalOutput);
    const verdicts = [await review()];
    const revised = verdicts[0]!.startsWith('REVISE');
    if (revised) {
      headline = text(
        (
          await run(
            agents.writer,
            `${brief}\nYour draft: ${headline}\nReviewer: ${verdicts[0]}\nWrite the revised headline.`,
          )
        ).finalOutput,
      );
      verdicts.push(await review());
    }
    return { headline, verdicts, revised, reward: headlineReward(headline, task, revised) };
  });
}

/** The rollout function: the writer samples at temperature 1 in train mode and greedily otherwise; returns the reward. */
export function newsroomRollout(options: { returnTokenIds?: boolean } = {}): RolloutFn<HeadlineTask> {
  return async (task: HeadlineTask, resources: NamedResources, ctx: AgentContext) => {
    const llm = resources.llm;
    if (llm?.resourceType !== 'llm') throw new Error('the newsroom needs an llm resource');
    const agents = newsroomAgents({
      baseURL: llm.endpoint,
      apiKey: llm.apiKey,
      model: llm.model,
      temperature: ctx.mode === 'train' ? 1 : 0,
      returnTokenIds: options.returnTokenIds,
    });
    return (await writeHeadline(agents, task)).reward;
  };
}
