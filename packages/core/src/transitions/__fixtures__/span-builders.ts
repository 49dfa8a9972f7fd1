import type { Span } from '../../schema/index';

/** Compact description of a hand-built span. */
export interface SpanSpec {
  id: string;
  parent?: string | null;
  name: string;
  start: number;
  end: number;
  attrs?: Span['attributes'];
  seq?: number;
  rolloutId?: string;
  attemptId?: string;
}

/** A full store span from a compact spec (rollout `ro-test`, attempt `at-test`, sequence = order unless given). */
export function makeSpan(spec: SpanSpec, index = 0): Span {
  return {
    rolloutId: spec.rolloutId ?? 'ro-test',
    attemptId: spec.attemptId ?? 'at-test',
    sequenceId: spec.seq ?? index + 1,
    traceId: 'trace-1',
    spanId: spec.id,
    parentId: spec.parent ?? null,
    name: spec.name,
    status: { statusCode: 'OK', description: null },
    attributes: spec.attrs ?? {},
    events: [],
    links: [],
    startTime: spec.start,
    endTime: spec.end,
    context: null,
    parent: null,
    resource: { attributes: {}, schemaUrl: '' },
  };
}

/** Many spans; sequence ids follow list order unless given. */
export const makeSpans = (specs: SpanSpec[]): Span[] => specs.map((s, i) => makeSpan(s, i));

/** Contract 2 attributes of a chat call. */
export function chatAttrs(options: {
  responseId?: string;
  prompt?: string;
  completion?: string;
  promptTokenIds?: number[];
  responseTokenIds?: number[];
  extra?: Span['attributes'];
}): Span['attributes'] {
  const attrs: Span['attributes'] = {
    'gen_ai.system': 'openai',
    'gen_ai.request.model': 'test-model',
    'gen_ai.prompt.0.role': 'user',
    'gen_ai.prompt.0.content': options.prompt ?? 'hi',
    'gen_ai.completion.0.role': 'assistant',
    'gen_ai.completion.0.content': options.completion ?? 'hello',
    'gen_ai.completion.0.finish_reason': 'stop',
  };
  if (options.responseId) attrs['gen_ai.response.id'] = options.responseId;
  if (options.promptTokenIds) attrs.prompt_token_ids = options.promptTokenIds;
  if (options.responseTokenIds) attrs.response_token_ids = options.responseTokenIds;
  return { ...attrs, ...options.extra };
}

/** Attributes of a reward span (`agentlightning.annotation`). */
export const rewardAttrs = (value: number): Span['attributes'] => ({
  'agentlightning.reward.0.name': 'primary',
  'agentlightning.reward.0.value': value,
});

/** Spec of an LLM-call span (`openai.chat.completion`), one second long; `over` sets anything else (parent, seq). */
export const llmSpan = (
  id: string,
  start: number,
  attrs: Span['attributes'],
  over: Partial<SpanSpec> = {},
): SpanSpec => ({ id, name: 'openai.chat.completion', start, end: start + 1, attrs, ...over });
