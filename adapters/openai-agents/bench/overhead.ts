// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/openai-agents`.
import { writeFileSync } from 'node:fs';
import {
  Agent,
  Runner,
  Usage,
  withGenerationSpan,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { getAglTracer, withRolloutContext } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { addAglTraceProcessor } from '../src/index';

const CALLS = Number(process.env.AGL_BENCH_CALLS ?? 10_000);
const PER_ROUND = Math.ceil(CALLS / 5);
const completion = {
  id: 'chatcmpl-1',
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'It is sunny.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 4 },
};
// The in-process fake model (a custom Model gets no generation span by itself: it opens one, like the OpenAI models).
class FakeModel implements Model {
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    return withGenerationSpan(
      async (span) => {
        span.spanData.input = [
          { role: 'system', content: request.systemInstructions ?? '' },
          { role: 'user', content: String(request.input) },
        ];
        span.spanData.output = [completion];
        return {
          output: [
            {
              type: 'message',
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: 'It is sunny.' }],
            },
          ],
          usage: new Usage({ requests: 1, inputTokens: 9, outputTokens: 4, totalTokens: 13 }),
          responseId: 'chatcmpl-1',
        };
      },
      { data: { model: 'm' } },
    );
  }
  getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not used');
  }
}
const agent = new Agent({ name: 'weather_agent', instructions: 'You are a weather agent.', model: new FakeModel() });
// Untraced rounds: a run config with tracing off creates no SDK spans (AGL keeps recording through
// `setTracingDisabled(true)`, so that no longer gives an untraced baseline).
const tracedRunner = new Runner();
const untracedRunner = new Runner({ tracingDisabled: true });

async function measure(runner: Runner): Promise<number> {
  for (let i = 0; i < 200; i += 1) await runner.run(agent, 'Weather in Paris?');
  const start = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i += 1) await runner.run(agent, 'Weather in Paris?');
  await getAglTracer().forceFlush();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PER_ROUND;
}

const store = new MemoryStore();
const rollout = await store.startRollout({ input: {} });
// Exclusive: no OpenAI dashboard exporter in the measurement.
addAglTraceProcessor({ exclusive: true });
const ctx = { rolloutId: rollout.rolloutId, attemptId: rollout.attempt.attemptId, store };
// Alternating rounds, so JIT warm-up and machine noise hit both modes alike.
const ROUNDS = 5;
let untracedTotal = 0;
let tracedTotal = 0;
for (let round = 0; round < ROUNDS; round += 1) {
  untracedTotal += await withRolloutContext(ctx, () => measure(untracedRunner));
  tracedTotal += await withRolloutContext(ctx, () => measure(tracedRunner));
}
const untraced = untracedTotal / ROUNDS;
const traced = tracedTotal / ROUNDS;
const spans = (await store.querySpans({ rolloutId: rollout.rolloutId, limit: 0 })).total;
const summary = {
  adapter: '@agl/openai-agents',
  calls: PER_ROUND * 5,
  untracedUsPerCall: +untraced.toFixed(1),
  tracedUsPerCall: +traced.toFixed(1),
  overheadUsPerCall: +(traced - untraced).toFixed(1),
  spansStored: spans,
};
console.log(JSON.stringify(summary));
// `--json <file>`: the same figures into a file (collected by `npm run bench` at the root, tools/bench).
const jsonAt = process.argv.indexOf('--json');
if (jsonAt > 0 && process.argv[jsonAt + 1]) writeFileSync(process.argv[jsonAt + 1]!, `${JSON.stringify(summary)}\n`);
await getAglTracer().shutdown();
