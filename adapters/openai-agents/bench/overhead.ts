// CPU time per traced LLM call vs untraced (not a test): `npm run bench -w adapters/openai-agents`.
import {
  Agent,
  Runner,
  Usage,
  withGenerationSpan,
  type Model,
  type ModelRequest,
  type ModelResponse,
} from '@openai/agents';
import { MemoryStore } from '@agl/store';
import { runOverheadBench } from '@agl/testing';
import { addAglTraceProcessor } from '../src/index';

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

// Exclusive: no OpenAI dashboard exporter in the measurement.
addAglTraceProcessor({ exclusive: true });

await runOverheadBench({
  adapter: '@agl/openai-agents',
  store: new MemoryStore(),
  callFor: (traced) => {
    const runner = traced ? tracedRunner : untracedRunner;
    return () => runner.run(agent, 'Weather in Paris?');
  },
});
