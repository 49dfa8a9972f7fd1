/**
 * `npm run demo -w examples/sql-agent`: APO on the SQL agent offline, against the rule-based test LLM server.
 * `npm start -w examples/sql-agent`: the same against $OPENAI_BASE_URL / $OPENAI_API_KEY (a real endpoint).
 * Flags: `--offline`, `--work-dir <dir>` (default `.agl/sql-agent`), `--rounds <n>`.
 */
import { parseArgs } from 'node:util';
import { startOpenAiTestServer } from '@agl/testing';
import { runSqlAgentApo } from './run-sql-agent';
import { sqlRuleLlm } from './sql-rule-llm';

const HOW_TO = `This example needs an OpenAI-compatible endpoint (or run it offline: npm run demo -w examples/sql-agent).

  OpenAI:      export OPENAI_API_KEY=sk-...
  Any server:  export OPENAI_BASE_URL=http://127.0.0.1:8000/v1   # vLLM, llama.cpp, Ollama, \`agl gateway serve\`
  Models:      export SQL_AGENT_MODEL=gpt-4.1-mini APO_GRADIENT_MODEL=gpt-5-mini APO_EDIT_MODEL=gpt-4.1-mini`;

const { values } = parseArgs({
  options: {
    offline: { type: 'boolean', default: false },
    'work-dir': { type: 'string', default: '.agl/sql-agent' },
    rounds: { type: 'string', default: '3' },
  },
});
const env = process.env;
if (!values.offline && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
  process.stdout.write(`${HOW_TO}\n`);
} else {
  const llm = values.offline ? await startOpenAiTestServer({ respond: sqlRuleLlm }) : null;
  const model = (name: string | undefined, fallback: string): string => (llm ? 'test-model' : (name ?? fallback));
  const started = Date.now();
  try {
    const result = await runSqlAgentApo({
      baseURL: llm?.baseURL ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: llm ? undefined : env.OPENAI_API_KEY,
      agentModel: model(env.SQL_AGENT_MODEL, 'gpt-4.1-mini'),
      gradientModel: model(env.APO_GRADIENT_MODEL, 'gpt-5-mini'),
      applyEditModel: model(env.APO_EDIT_MODEL, 'gpt-4.1-mini'),
      workDir: values['work-dir'],
      apo: { beamRounds: Number(values.rounds), outputPath: `${values['work-dir']}/best-prompt.txt` },
      onEvent: (e) => {
        if (e.type === 'seed') process.stderr.write(`apo: seed prompt val ${e.score?.toFixed(3)}\n`);
        if (e.type === 'round')
          process.stderr.write(
            `apo: round ${e.round} leader ${e.leader} ${e.leaderScore.toFixed(3)}, best ${e.bestVersion} ${e.bestScore.toFixed(3)}\n`,
          );
      },
    });
    process.stdout.write(
      `execution match on ${20} val questions: seed ${result.seedScore?.toFixed(3)} → best ${result.bestVersion} ${result.bestScore.toFixed(3)} ` +
        `(${result.usage.calls} critique/edit calls, ${((Date.now() - started) / 1000).toFixed(1)} s)\n` +
        `store: ${result.storePath}\ndatabase: ${result.dbPath}\nbest prompt:\n${result.bestPrompt}\n`,
    );
  } finally {
    await llm?.close();
  }
}
