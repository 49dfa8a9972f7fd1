/**
 * `npm run demo -w examples/rag`: the RAG agent over the shipped questions, offline, against the rule-based reader.
 * `npm start -w examples/rag`: the same against $OPENAI_BASE_URL / $OPENAI_API_KEY ($RAG_MODEL, default gpt-4.1-mini).
 * Flags: `--offline`, `--work-dir <dir>` (default `.agl/rag`), `--top-k <n>` (default 2).
 */
import { parseArgs } from 'node:util';
import { startOpenAiTestServer } from '@agl/testing';
import { ragRuleLlm } from './rag-rule-llm';
import { runRag } from './run-rag';

const HOW_TO = `This example needs an OpenAI-compatible endpoint (or run it offline: npm run demo -w examples/rag).

  OpenAI:      export OPENAI_API_KEY=sk-...
  Any server:  export OPENAI_BASE_URL=http://127.0.0.1:8000/v1   # vLLM, llama.cpp, Ollama, \`agl gateway serve\`
  Model:       export RAG_MODEL=gpt-4.1-mini`;

const { values } = parseArgs({
  options: {
    offline: { type: 'boolean', default: false },
    'work-dir': { type: 'string', default: '.agl/rag' },
    'top-k': { type: 'string', default: '2' },
  },
});
const env = process.env;
if (!values.offline && !env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
  process.stdout.write(`${HOW_TO}\n`);
} else {
  const llm = values.offline ? await startOpenAiTestServer({ respond: ragRuleLlm }) : null;
  try {
    const result = await runRag({
      baseURL: llm?.baseURL ?? env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
      apiKey: llm ? undefined : env.OPENAI_API_KEY,
      model: llm ? 'test-model' : (env.RAG_MODEL ?? 'gpt-4.1-mini'),
      returnTokenIds: llm !== null,
      topK: Number(values['top-k']),
      workDir: values['work-dir'],
    });
    for (const o of result.outcomes)
      process.stdout.write(
        `${o.taskId}  f1 ${o.f1.toFixed(2)}  em ${o.exactMatch}  ${o.llmCalls} LLM calls  ${JSON.stringify(o.answer)}\n`,
      );
    process.stdout.write(
      `${result.outcomes.length} rollouts: mean F1 ${result.meanF1.toFixed(3)}, exact match ${result.meanExactMatch.toFixed(3)}\nstore: ${result.storePath}\n`,
    );
  } finally {
    await llm?.close();
  }
}
