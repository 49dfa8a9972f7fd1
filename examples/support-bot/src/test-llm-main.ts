/**
 * `npm run test-llm` (from examples/support-bot): a scripted OpenAI-compatible LLM on 127.0.0.1:`PORT` (default 4000) that
 * plays the support agent's model offline (see `supportRuleLlm`). Prints `OPENAI_BASE_URL=...`; Ctrl-C stops it.
 */
import { startOpenAiTestServer } from '@agl/testing';
import { supportRuleLlm } from './support-rule-llm';

const llm = await startOpenAiTestServer({
  respond: supportRuleLlm,
  port: Number(process.env.PORT ?? 4000),
  latencyMs: Number(process.env.TEST_LLM_LATENCY_MS ?? 0),
});
console.log(`OPENAI_BASE_URL=${llm.baseURL}`);
const stop = (): void => void llm.close().finally(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
