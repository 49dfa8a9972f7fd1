/**
 * `npm run demo -w examples/multi-agent`: writer + reviewer offline against the rule-based test server, then the
 * writer-only training samples. `npm start -w examples/multi-agent`: the same against $OPENAI_BASE_URL /
 * $OPENAI_API_KEY ($NEWSROOM_MODEL, default gpt-4.1-mini). Flags: `--offline`, `--work-dir <dir>`, `--group-size <n>`.
 */
import { parseArgs } from 'node:util';
import { startOpenAiTestServer } from '@agl/testing';
import { newsroomRuleLlm } from './newsroom-rule-llm';
import { runNewsroom } from './run-newsroom';

const HOW_TO = `This example needs an OpenAI-compatible endpoint (or run it offline: npm run demo -w examples/multi-agent).

  OpenAI:      export OPENAI_API_KEY=sk-...
  Any server:  export OPENAI_BASE_URL=http://127.0.0.1:8000/v1   # vLLM (token ids), \`agl gateway serve\`, ...
  Model:       export NEWSROOM_MODEL=gpt-4.1-mini`;

const { values } = parseArgs({
  options: {
    offline: { type: 'boolean', default: false },
    'work-dir': { type: 'string', default: '.agl/multi-agent' },
    'group-size': { type: 'string', default: '3' },
  },
});
const env = process.env;
if (!values.offline && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
  process.stdout.write(`${HOW_TO}\n`);
} else {
  const llm = values.offline ? await startOpenAiTestServer({ respond: newsroomRuleLlm() }) : null;
  try {
    const r = await runNewsroom({
      baseURL: llm?.baseURL ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: llm ? undefined : env.OPENAI_API_KEY,
      model: llm ? 'test-model' : (env.NEWSROOM_MODEL ?? 'gpt-4.1-mini'),
      returnTokenIds: llm !== null,
      groupSize: Number(values['group-size']),
      workDir: values['work-dir'],
    });
    const adv = r.batch.samples.map((s) => s.advantage.toFixed(2)).join(' ');
    process.stdout.write(
      `${r.allTrajectories.length} rollouts, mean reward ${r.meanReward.toFixed(3)}\n` +
        `LLM calls in the store by agent: ${JSON.stringify(r.callsByAgent)}\n` +
        `training samples (agentMatch "writer"): ${r.batch.samples.length}, agents ${JSON.stringify([...new Set(r.batch.samples.map((s) => s.agentName))])}, ` +
        `skipped without token ids ${r.batch.stats.nSkippedNoTokens}\nGRPO advantages: ${adv}\n` +
        `verl rows: ${r.verl.files.jsonl ?? '(none)'} (${r.verl.stats.nSamples} rows)\nstore: ${r.storePath}\n`,
    );
  } finally {
    await llm?.close();
  }
}
