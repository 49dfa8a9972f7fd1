/**
 * `npm run apo -w examples/calc-x -- --offline`: APO on the Calc-X agent's system prompt against the rule-based test
 * LLM. Without `--offline` it uses $OPENAI_BASE_URL / $OPENAI_API_KEY (models: $CALC_AGENT_MODEL,
 * $APO_GRADIENT_MODEL, $APO_EDIT_MODEL). Flags: `--store <path>` (default `.agl/calc-x-apo/store.sqlite`),
 * `--rounds <n>` (default 2).
 */
import { parseArgs } from 'node:util';
import { startOpenAiTestServer } from '@agl/testing';
import { runCalcApo } from './apo-variant';
import { calcApoRuleLlm } from './apo-variant-rule-llm';

const { values } = parseArgs({
  options: {
    offline: { type: 'boolean', default: false },
    store: { type: 'string', default: '.agl/calc-x-apo/store.sqlite' },
    rounds: { type: 'string', default: '2' },
  },
});
const env = process.env;
if (!values.offline && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
  process.stdout.write('Set OPENAI_BASE_URL / OPENAI_API_KEY for a real endpoint, or pass --offline.\n');
} else {
  const llm = values.offline ? await startOpenAiTestServer({ respond: calcApoRuleLlm }) : null;
  const model = (name: string | undefined, fallback: string): string => (llm ? 'test-model' : (name ?? fallback));
  try {
    const r = await runCalcApo({
      baseURL: llm?.baseURL ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: llm ? undefined : env.OPENAI_API_KEY,
      agentModel: model(env.CALC_AGENT_MODEL, 'gpt-4.1-mini'),
      gradientModel: model(env.APO_GRADIENT_MODEL, 'gpt-5-mini'),
      applyEditModel: model(env.APO_EDIT_MODEL, 'gpt-4.1-mini'),
      store: values.store,
      apo: { beamRounds: Number(values.rounds) },
      onEvent: (e) => {
        if (e.type === 'round')
          process.stderr.write(`apo: round ${e.round} leader ${e.leader} ${e.leaderScore.toFixed(3)}\n`);
      },
    });
    process.stdout.write(
      `exact match on 12 held-out tasks: seed ${r.seedScore?.toFixed(3)} → best ${r.bestVersion} ${r.bestScore.toFixed(3)}\nstore: ${values.store}\nbest prompt:\n${r.bestPrompt}\n`,
    );
  } finally {
    await llm?.close();
  }
}
