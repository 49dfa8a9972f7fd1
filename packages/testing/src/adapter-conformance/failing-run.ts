import type { Span } from '@agl/core';
import { TraceToTransitions } from '@agl/core/transitions';
import { ATTR_AGENT_NAME, SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { expect } from 'vitest';
import type { TestLlmReply, TestLlmRequest } from '../openai-test-server/types';
import { expectedWeatherTransitions, normalizeTransitions, WEATHER_TASK } from './weather-script';

/** The message of the model's 400 in {@link failingWeatherRespond}. */
export const FAILING_MODEL_MESSAGE = 'context_length_exceeded: the tool result made the prompt too long';

/** The weather model, failing mid-run: it calls `get_weather`, then answers the tool result with HTTP 400. */
export function failingWeatherRespond(request: TestLlmRequest): TestLlmReply {
  if (request.messages.some((m) => m.role === 'tool')) {
    return { error: { status: 400, message: FAILING_MODEL_MESSAGE, type: 'invalid_request_error' } };
  }
  return { toolCalls: [{ name: WEATHER_TASK.tool, arguments: WEATHER_TASK.toolArgs }] };
}

/**
 * Checks the spans of a weather run whose model answered 400 after the tool result: both LLM calls are there (the
 * failed one with an ERROR status), the first transition is the expected tool call, every transition carries the
 * agent's name, and the agent span (when the framework has one) reached the store closed with an ERROR status.
 */
export function assertFailingRunSpans(spans: Span[], agentName: string | null): void {
  const llm = spans.filter((s) => s.name === SPAN_CHAT_COMPLETION);
  expect(llm.length, 'both LLM calls, the failed one included').toBeGreaterThanOrEqual(2);
  expect(
    llm.some((s) => s.status.statusCode === 'ERROR'),
    'the call answered with 400 has an ERROR status',
  ).toBe(true);
  const transitions = new TraceToTransitions().transitions(spans);
  expect(transitions.length).toBeGreaterThanOrEqual(1);
  expect(normalizeTransitions(transitions)[0]).toEqual(expectedWeatherTransitions(agentName)[0]);
  for (const t of transitions) expect(t.agentName, 'every transition names the agent').toBe(agentName);
  if (agentName === null) return;
  const agent = spans.find((s) => s.attributes[ATTR_AGENT_NAME] === agentName);
  expect(agent, `the ${agentName} agent span`).toBeDefined();
  expect(agent?.status.statusCode, 'the agent span is closed with an error').toBe('ERROR');
}

/**
 * The weather model of the failing-app tests: it calls `get_weather` for Paris, then answers from the tool result with
 * `answer(result)`. A run whose user prompt starts with `failPrefix` gets a 400 `context length exceeded`: at its first
 * call, or with `failAfterTool` at the call after the tool result (mid-run).
 */
export function scriptedWeatherRespond(options: {
  failPrefix: string;
  failAfterTool?: boolean;
  answer: (toolResult: string) => string;
}): (request: TestLlmRequest) => TestLlmReply {
  return (request) => {
    const result = request.messages.find((m) => m.role === 'tool');
    const failing = request.messages.some((m) => m.role === 'user' && m.content.startsWith(options.failPrefix));
    if (failing && (!options.failAfterTool || result))
      return { error: { status: 400, message: 'context length exceeded' } };
    if (!result) return { toolCalls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] };
    return { content: options.answer(result.content) };
  };
}
