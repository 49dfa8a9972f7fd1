/**
 * `npm run test-servers` (from examples/support-bot): the two offline stand-ins of the improvement loop, on 127.0.0.1:
 * the scripted OpenAI-compatible LLM (`loopRuleLlm`: the agent, the judge, APO's critic and editor) on `PORT`
 * (default 4000), and the OpenAI files + fine-tuning API (`startFineTuningTestServer`) on `FT_PORT` (default 4001),
 * whose jobs run through queued, running and succeeded as the client polls. Prints `OPENAI_BASE_URL=...` and
 * `FINE_TUNING_URL=...`; Ctrl-C stops both.
 */
import { startFineTuningTestServer, startOpenAiTestServer } from '@agl/testing';
import { loopRuleLlm } from './support-rule-llm';

const llm = await startOpenAiTestServer({ respond: loopRuleLlm, port: Number(process.env.PORT ?? 4000) });
const ft = await startFineTuningTestServer({ advance: 'on-poll', port: Number(process.env.FT_PORT ?? 4001) });
console.log(`OPENAI_BASE_URL=${llm.baseURL}`);
console.log(`FINE_TUNING_URL=${ft.baseURL}`);
const stop = (): void => void Promise.all([llm.close(), ft.close()]).finally(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
