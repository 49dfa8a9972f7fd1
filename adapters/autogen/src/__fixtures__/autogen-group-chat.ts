/**
 * SYNTHETIC FIXTURE. Python AutoGen cannot be installed here, so this is no recording: it is a span tree shaped like
 * what an AgentChat `RoundRobinGroupChat` (planner + critic, one tool call) exports over OTLP, with the span names and
 * attributes cited from ../shared/reference/typescript-frameworks.md:
 * - §7.1 runtime messaging spans `autogen {operation} {destination}` (destination `type.(key)-A`, kind CONSUMER for
 *   process) with `messaging.operation`, `messaging.destination`, `messaging.message.envelope.size`,
 *   `messaging.message.type`;
 * - §7.1 GenAI spans `create_agent {name}` / `invoke_agent {name}` (CLIENT; `gen_ai.operation.name`,
 *   `gen_ai.system=autogen`, `gen_ai.agent.name|id|description`) and `execute_tool {tool}` (INTERNAL;
 *   `gen_ai.tool.name|description|call.id`, `gen_ai.agent.action_ref`);
 * - §7.1 + §9 the OpenAI instrumentation's `chat {model}` spans (`opentelemetry-instrumentation-openai-v2` with
 *   `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental` and content capture `span_only`): `gen_ai.input.messages`
 *   / `gen_ai.output.messages` JSON, `gen_ai.request.model`, `gen_ai.response.id|model|finish_reasons`,
 *   `gen_ai.usage.input_tokens|output_tokens`;
 * - §9 legacy indexed form (OpenLLMetry's `opentelemetry-instrumentation-openai`, span `openai.chat`):
 *   `gen_ai.prompt.{i}.role|content`, `gen_ai.completion.{i}.role|content|finish_reason` — the critic's call uses it.
 */
import { SpanKind, type SpanSpec } from '@agl/testing';

const MODEL = 'gpt-4o-mini';

const messaging = (operation: string, destination: string): SpanSpec['attributes'] => ({
  'messaging.operation': operation,
  'messaging.destination': destination,
  'messaging.message.envelope.size': 412,
  'messaging.message.type': 'GroupChatRequestPublish',
});

const agentAttrs = (operation: 'create_agent' | 'invoke_agent', name: string, description: string) => ({
  'gen_ai.operation.name': operation,
  'gen_ai.system': 'autogen',
  'gen_ai.agent.name': name,
  'gen_ai.agent.id': `${name}_team-1/default`,
  'gen_ai.agent.description': description,
});

const chat = (responseId: string, input: unknown[], output: unknown[], finish: string, usage: [number, number]): SpanSpec => ({
  name: `chat ${MODEL}`,
  kind: SpanKind.CLIENT,
  attributes: {
    'gen_ai.operation.name': 'chat',
    'gen_ai.system': 'openai',
    'gen_ai.request.model': MODEL,
    'gen_ai.request.temperature': 0.7,
    'gen_ai.response.id': responseId,
    'gen_ai.response.model': `${MODEL}-2024-07-18`,
    'gen_ai.response.finish_reasons': [finish],
    'gen_ai.usage.input_tokens': usage[0],
    'gen_ai.usage.output_tokens': usage[1],
    'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: 'You are the planner. Use tools.' }]),
    'gen_ai.input.messages': JSON.stringify(input),
    'gen_ai.output.messages': JSON.stringify(output),
  },
});

const TASK = 'Plan a day in Paris that fits the weather.';
const TOOL_CALL = { type: 'tool_call', id: 'call_weather_1', name: 'get_weather', arguments: { city: 'Paris' } };

/** The group chat: planner (2 chat calls around a tool call), then critic (1 call, OpenLLMetry form). */
export const AUTOGEN_GROUP_CHAT: SpanSpec[] = [
  { name: 'create_agent planner', kind: SpanKind.CLIENT, attributes: agentAttrs('create_agent', 'planner', 'Plans trips.') },
  { name: 'create_agent critic', kind: SpanKind.CLIENT, attributes: agentAttrs('create_agent', 'critic', 'Reviews plans.') },
  {
    name: 'autogen process planner_team-1.(default)-A',
    kind: SpanKind.CONSUMER,
    attributes: messaging('process', 'planner_team-1.(default)-A'),
    children: [
      {
        name: 'invoke_agent planner',
        kind: SpanKind.CLIENT,
        attributes: agentAttrs('invoke_agent', 'planner', 'Plans trips.'),
        children: [
          chat(
            'chatcmpl-planner-1',
            [{ role: 'user', parts: [{ type: 'text', content: TASK }] }],
            [{ role: 'assistant', parts: [TOOL_CALL], finish_reason: 'tool_calls' }],
            'tool_calls',
            [52, 17],
          ),
          {
            name: 'execute_tool get_weather',
            kind: SpanKind.INTERNAL,
            attributes: {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': 'get_weather',
              'gen_ai.tool.description': 'Current weather of a city.',
              'gen_ai.tool.call.id': 'call_weather_1',
              'gen_ai.agent.action_ref': 'c1f3a9d0e5b7c2a4f6e8d0b2a4c6e8f0a2b4c6d8e0f2a4b6c8d0e2f4a6b8c0d2',
            },
          },
          chat(
            'chatcmpl-planner-2',
            [
              { role: 'user', parts: [{ type: 'text', content: TASK }] },
              { role: 'assistant', parts: [TOOL_CALL] },
              { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_weather_1', response: 'rain, 14°C' }] },
            ],
            [{ role: 'assistant', parts: [{ type: 'text', content: 'Louvre in the morning, Orsay after lunch.' }], finish_reason: 'stop' }],
            'stop',
            [88, 24],
          ),
        ],
      },
    ],
  },
  {
    name: 'autogen process critic_team-1.(default)-A',
    kind: SpanKind.CONSUMER,
    attributes: messaging('process', 'critic_team-1.(default)-A'),
    children: [
      {
        name: 'invoke_agent critic',
        kind: SpanKind.CLIENT,
        attributes: agentAttrs('invoke_agent', 'critic', 'Reviews plans.'),
        children: [
          {
            name: 'openai.chat',
            kind: SpanKind.CLIENT,
            attributes: {
              'llm.request.type': 'chat',
              'gen_ai.system': 'openai',
              'gen_ai.request.model': MODEL,
              'gen_ai.response.id': 'chatcmpl-critic-1',
              'gen_ai.prompt.0.role': 'system',
              'gen_ai.prompt.0.content': 'You are the critic. Reply APPROVE when the plan is good.',
              'gen_ai.prompt.1.role': 'user',
              'gen_ai.prompt.1.content': 'Louvre in the morning, Orsay after lunch.',
              'gen_ai.completion.0.role': 'assistant',
              'gen_ai.completion.0.content': 'APPROVE',
              'gen_ai.completion.0.finish_reason': 'stop',
              'gen_ai.usage.prompt_tokens': 40,
              'gen_ai.usage.completion_tokens': 2,
            },
          },
        ],
      },
    ],
  },
];
