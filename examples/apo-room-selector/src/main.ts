/**
 * `npm start -w examples/apo-room-selector`: optimise the room agent's prompt against a real OpenAI-compatible
 * endpoint. Without OPENAI_API_KEY / OPENAI_BASE_URL it explains how to point it at one and exits.
 */
import { runRoomSelector } from './run-room-selector';

const HOW_TO = `This example needs an OpenAI-compatible endpoint for the agent, critique and edit models.

  OpenAI:          export OPENAI_API_KEY=sk-...
  Any other server (vLLM, llama.cpp, Ollama, \`agl gateway serve\`):
                   export OPENAI_BASE_URL=http://127.0.0.1:8000/v1   # plus OPENAI_API_KEY if it needs one
  Models (defaults shown):
                   export APO_AGENT_MODEL=gpt-4.1-mini APO_GRADIENT_MODEL=gpt-5-mini APO_EDIT_MODEL=gpt-4.1-mini

Then: npm start -w examples/apo-room-selector
Offline, \`npx vitest run --project apo-room-selector\` runs the same flow against a local rule-based test server.`;

const env = process.env;
if (!env.OPENAI_API_KEY && !env.OPENAI_BASE_URL) {
  process.stdout.write(`${HOW_TO}\n`);
} else {
  const result = await runRoomSelector({
    baseURL: env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
    apiKey: env.OPENAI_API_KEY,
    agentModel: env.APO_AGENT_MODEL ?? 'gpt-4.1-mini',
    gradientModel: env.APO_GRADIENT_MODEL ?? 'gpt-5-mini',
    applyEditModel: env.APO_EDIT_MODEL ?? 'gpt-4.1-mini',
    apo: { outputPath: '.agl/apo-room-selector/best-prompt.txt', diversityTemperature: 1.0 },
    onEvent: (e) => {
      if (e.type === 'seed' || e.type === 'round' || e.type === 'budget-exhausted')
        process.stderr.write(`${JSON.stringify(e)}\n`);
    },
  });
  process.stdout.write(
    `seed val ${result.seedScore?.toFixed(3)} → best ${result.bestVersion} val ${result.bestScore.toFixed(3)} (${result.usage.calls} LLM calls, ${result.usage.promptTokens + result.usage.completionTokens} tokens)\n`,
  );
  process.stdout.write(`best prompt (saved to .agl/apo-room-selector/best-prompt.txt):\n${result.bestPrompt}\n`);
}
