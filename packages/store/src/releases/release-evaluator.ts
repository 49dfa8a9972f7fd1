import {
  isAttemptedRollout,
  isTerminalStatus,
  RELEASE_METADATA,
  type AttemptedRollout,
  type Release,
  type Rollout,
  type Span,
} from '@agl/core/schema';
import { ATTR_JUDGE_RUBRIC_HASH, SPAN_ANNOTATION } from '@agl/core/semconv';
import type { AttemptRef, LightningStore } from '@agl/core/store';
import { getRewardSource, getRewardsFromSpan, getRewardValue, isRewardSpan, listFeedback } from '@agl/core/transitions';
import type { ArmData } from './release-decision';

/** The LLM-call span names whose token usage a tokens guard adds up. */
const LLM_SPANS = ['openai.chat.completion', 'openai.completion'];
/** Attempts per span read, so each store read stays short. */
const CHUNK = 1000;

/** The metric value of one request from its annotation / reward spans (oldest first), or null. */
export function metricValue(metric: string, spans: readonly Span[]): number | null {
  if (metric === 'feedback') return listFeedback(spans).at(-1)?.reward ?? null;
  if (metric.startsWith('judge:')) {
    const rubric = metric.slice('judge:'.length);
    for (let i = spans.length - 1; i >= 0; i -= 1) {
      const span = spans[i]!;
      if (!isRewardSpan(span) || getRewardSource(span) !== 'judge') continue;
      const hash = span.attributes[ATTR_JUDGE_RUBRIC_HASH];
      if (rubric === '*' || (typeof hash === 'string' && hash.startsWith(rubric))) return getRewardValue(span);
    }
    return null;
  }
  for (let i = spans.length - 1; i >= 0; i -= 1) {
    const span = spans[i]!;
    if (getRewardSource(span) !== 'agent') continue;
    const dim = getRewardsFromSpan(span).find((d) => d.name === metric);
    if (dim) return dim.value;
  }
  return null;
}

function tokensOf(spans: readonly Span[]): number {
  let total = 0;
  for (const span of spans) {
    const a = span.attributes;
    const input = Number(a['gen_ai.usage.input_tokens'] ?? a['gen_ai.usage.prompt_tokens'] ?? 0);
    const output = Number(a['gen_ai.usage.output_tokens'] ?? a['gen_ai.usage.completion_tokens'] ?? 0);
    total += (Number.isFinite(input) ? input : 0) + (Number.isFinite(output) ? output : 0);
  }
  return total;
}

async function spansOf(store: LightningStore, refs: readonly AttemptRef[], name: string): Promise<Span[][]> {
  const out: Span[][] = [];
  for (let i = 0; i < refs.length; i += CHUNK) {
    const chunk = refs.slice(i, i + CHUNK);
    if (store.querySpansOfAttempts) out.push(...(await store.querySpansOfAttempts(chunk, { name })));
    else
      out.push(
        ...(await Promise.all(
          chunk.map(async (ref) => (await store.querySpans({ ...ref, name, sortBy: 'sequenceId' })).items),
        )),
      );
  }
  return out;
}

/**
 * Reads a release's finished requests from the store, per arm: each request's outcome and duration, its metric value
 * (from the annotation spans of its latest attempt) and, with a tokens guard, its tokens. Requests are the rollouts
 * whose `metadata.release_id` names the release.
 */
export async function collectReleaseData(
  store: LightningStore,
  release: Release,
): Promise<{ baseline: ArmData; candidate: ArmData }> {
  const page = await store.queryRollouts({ limit: -1, sortBy: 'startTime', sortOrder: 'asc' });
  const finished = page.items.filter(
    (r): r is AttemptedRollout =>
      r.metadata?.[RELEASE_METADATA.releaseId] === release.releaseId &&
      isTerminalStatus(r.status) &&
      r.endTime !== null &&
      isAttemptedRollout(r),
  );
  const refs = finished.map((r) => ({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId }));
  const annotations = await spansOf(store, refs, SPAN_ANNOTATION);
  const needTokens = release.guards.some((g) => g.startsWith('tokens:'));
  const llm = needTokens ? await Promise.all(LLM_SPANS.map((name) => spansOf(store, refs, name))) : null;
  const arms: { baseline: ArmData; candidate: ArmData } = {
    baseline: { requests: [], metric: [], tokens: [] },
    candidate: { requests: [], metric: [], tokens: [] },
  };
  finished.forEach((rollout: Rollout, i) => {
    const armName = rollout.metadata?.[RELEASE_METADATA.arm];
    if (armName !== 'baseline' && armName !== 'candidate') return;
    const arm = arms[armName] as { requests: ArmData['requests'][number][]; metric: number[]; tokens: number[] };
    arm.requests.push({
      failed: rollout.status !== 'succeeded',
      durationSeconds: Math.max(0, rollout.endTime! - rollout.startTime),
      startTime: rollout.startTime,
    });
    const value = metricValue(release.metric, annotations[i]!);
    if (value !== null) arm.metric.push(value);
    if (llm) arm.tokens.push(tokensOf(llm.flatMap((lists) => lists[i]!)));
  });
  return arms;
}
