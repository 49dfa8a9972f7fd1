/**
 * SYNTHETIC FIXTURE. Python CrewAI cannot be installed here, so this is no recording: it is a span tree shaped like
 * what a two-agent sequential crew (Researcher with a search tool, then Writer) exports over OTLP when instrumented
 * with `openinference-instrumentation-crewai`, with the span names and attributes cited from
 * ../shared/reference/typescript-frameworks.md:
 * - §7.2 wrapper-based instrumentation: `{crew}.kickoff` (CHAIN; `crew_key`, `crew_id`, `crew_inputs`, `crew_agents`,
 *   `crew_tasks`), `{role}._execute_core` (AGENT; `task_key`, `task_id`, `graph.node.id` = role,
 *   `graph.node.parent_id`, `llm.model_name`, `llm.provider`, `llm.system`, `crew_key`, `crew_id`), `{tool}._use`
 *   (TOOL; `tool.name`, `function_calling_llm`); every span has `input.value|mime_type`, `output.value|mime_type`;
 * - §7.2 event-bus instrumentation: agent spans named `{role}.{task[:50]}.execute` (modelled here without
 *   `graph.node.id`, so the role comes from the span name);
 * - §8 OpenInference LLM spans: `openinference.span.kind=LLM`, `llm.input_messages.{i}.message.role|content|
 *   tool_call_id`, `llm.output_messages.{i}.message.tool_calls.{k}.tool_call.id|function.name|function.arguments`,
 *   `llm.tools.{i}.tool.json_schema`, `llm.model_name`, `llm.invocation_parameters`, `llm.token_count.prompt|
 *   completion|total`. The LLM span name (`completion`, as LiteLLM's instrumentation names it) is illustrative: the
 *   adapter selects LLM calls by `openinference.span.kind`, never by name.
 */
import { SpanKind, type SpanSpec } from '@agl/testing';

/** Which CrewAI instrumentation generation the fixture imitates. */
export type CrewStyle = 'wrapper' | 'event-bus';

const MODEL = 'gpt-4o-mini';
const RESEARCH_TASK = 'Find three facts about the Rhine river';
const WRITE_TASK = 'Write a two-sentence summary of the facts';
const io = (input: string, output: string) => ({
  'input.value': input,
  'input.mime_type': 'text/plain',
  'output.value': output,
  'output.mime_type': 'text/plain',
});

function llm(input: [string, string][], output: Record<string, string | number>, tokens: [number, number]): SpanSpec {
  const attributes: SpanSpec['attributes'] = {
    'openinference.span.kind': 'LLM',
    'llm.model_name': MODEL,
    'llm.provider': 'openai',
    'llm.system': 'openai',
    'llm.invocation_parameters': JSON.stringify({ temperature: 0.2 }),
    'llm.token_count.prompt': tokens[0],
    'llm.token_count.completion': tokens[1],
    'llm.token_count.total': tokens[0] + tokens[1],
    'llm.tools.0.tool.json_schema': JSON.stringify({
      type: 'function',
      function: { name: 'search', description: 'Web search', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
    }),
    ...io(JSON.stringify(input), String(output['message.content'] ?? '')),
  };
  input.forEach(([role, content], i) => {
    attributes[`llm.input_messages.${i}.message.role`] = role;
    attributes[`llm.input_messages.${i}.message.content`] = content;
    if (role === 'tool') attributes[`llm.input_messages.${i}.message.tool_call_id`] = 'call_search_1';
  });
  for (const [key, value] of Object.entries(output)) attributes[`llm.output_messages.0.${key}`] = value;
  return { name: 'completion', kind: SpanKind.INTERNAL, attributes };
}

function agent(style: CrewStyle, role: string, task: string, taskId: string, children: SpanSpec[]): SpanSpec {
  if (style === 'event-bus') {
    return { name: `${role}.${task.slice(0, 50)}.execute`, kind: SpanKind.INTERNAL, attributes: { 'openinference.span.kind': 'AGENT', ...io(task, 'done') }, children };
  }
  return {
    name: `${role}._execute_core`,
    kind: SpanKind.INTERNAL,
    attributes: {
      'openinference.span.kind': 'AGENT',
      task_key: `key-${taskId}`,
      task_id: taskId,
      'graph.node.id': role,
      'graph.node.parent_id': 'crew',
      'llm.model_name': MODEL,
      'llm.provider': 'openai',
      'llm.system': 'openai',
      crew_key: 'crew-key-1',
      crew_id: 'crew-1',
      ...io(task, 'done'),
    },
    children,
  };
}

/** The crew: Researcher (LLM → search tool → LLM), then Writer (one LLM call). */
export function crewAiCrew(style: CrewStyle): SpanSpec[] {
  const researcher = agent(style, 'Researcher', RESEARCH_TASK, 'task-1', [
    llm(
      [['system', 'You are Researcher.'], ['user', RESEARCH_TASK]],
      {
        'message.role': 'assistant',
        'message.tool_calls.0.tool_call.id': 'call_search_1',
        'message.tool_calls.0.tool_call.function.name': 'search',
        'message.tool_calls.0.tool_call.function.arguments': '{"query":"Rhine river facts"}',
      },
      [61, 19],
    ),
    {
      name: 'search._use',
      kind: SpanKind.INTERNAL,
      attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'search', function_calling_llm: MODEL, ...io('{"query":"Rhine river facts"}', '1233 km long') },
    },
    llm(
      [['system', 'You are Researcher.'], ['user', RESEARCH_TASK], ['tool', '1233 km long']],
      { 'message.role': 'assistant', 'message.content': 'The Rhine is 1233 km long.' },
      [90, 12],
    ),
  ]);
  const writer = agent(style, 'Writer', WRITE_TASK, 'task-2', [
    llm([['system', 'You are Writer.'], ['user', WRITE_TASK]], { 'message.role': 'assistant', 'message.content': 'The Rhine flows 1233 km.' }, [40, 9]),
  ]);
  return [
    {
      name: 'Crew.kickoff',
      kind: SpanKind.INTERNAL,
      attributes: {
        'openinference.span.kind': 'CHAIN',
        crew_key: 'crew-key-1',
        crew_id: 'crew-1',
        crew_inputs: JSON.stringify({ topic: 'Rhine' }),
        crew_agents: JSON.stringify([{ role: 'Researcher' }, { role: 'Writer' }]),
        crew_tasks: JSON.stringify([{ description: RESEARCH_TASK }, { description: WRITE_TASK }]),
        ...io('{"topic":"Rhine"}', 'The Rhine flows 1233 km.'),
      },
      children: [researcher, writer],
    },
  ];
}
