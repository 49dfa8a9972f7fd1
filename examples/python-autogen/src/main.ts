/**
 * `npm run demo -w examples/python-autogen`: the TypeScript side with `replay_otlp.py` standing in for the AutoGen
 * team (recorded OTLP, runs here). `npm start -w examples/python-autogen`: the real `python/team.py` (needs
 * `pip install -r requirements.txt` and an LLM: $OPENAI_BASE_URL / $OPENAI_API_KEY, $AUTOGEN_MODEL). Flags:
 * `--replay`, `--store <path|url>` (default `.agl/python-autogen/store.sqlite`), `--agent <name>` (default solver),
 * `--gateway` (route the team's LLM calls through a loopback AGL gateway).
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import { trainAutogenTeam } from './autogen-team';

const { values } = parseArgs({
  options: {
    replay: { type: 'boolean', default: false },
    store: { type: 'string', default: '.agl/python-autogen/store.sqlite' },
    agent: { type: 'string', default: 'solver' },
    gateway: { type: 'boolean', default: false },
  },
});
const env = process.env;
if (!values.replay && spawnSync('python3', ['-c', 'import autogen_agentchat, opentelemetry.sdk']).status !== 0) {
  process.stdout.write(
    'python/team.py needs AutoGen and OpenTelemetry: pip install -r examples/python-autogen/requirements.txt\n' +
      'and an LLM (OPENAI_API_KEY, or OPENAI_BASE_URL for a local server). Without them, run the replay instead:\n' +
      '  npm run demo -w examples/python-autogen\n',
  );
  process.exit(1);
}
const result = await trainAutogenTeam({
  python: values.replay ? 'replay' : 'team',
  store: values.store,
  agentMatch: values.agent,
  gateway: values.gateway,
  llm: values.replay
    ? undefined
    : {
        endpoint: env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
        model: env.AUTOGEN_MODEL ?? 'gpt-4o-mini',
        apiKey: env.OPENAI_API_KEY,
      },
});
const taskOf = (rolloutId: string): string =>
  (result.rollouts.find((r) => r.rolloutId === rolloutId)?.input as { id?: string } | undefined)?.id ?? rolloutId;
for (const t of [...result.trajectories].sort((a, b) => taskOf(a.rolloutId).localeCompare(taskOf(b.rolloutId)))) {
  const calls = t.transitions.map(
    (x) =>
      x.action.message.toolCalls?.map((c) => `${c.name}(${c.arguments})`).join(', ') ||
      JSON.stringify(x.action.message.content),
  );
  process.stdout.write(
    `${taskOf(t.rolloutId)}  reward ${t.finalReward}  ${values.agent} calls: ${calls.join(' → ')}\n`,
  );
}
process.stdout.write(
  `${result.trajectories.length} rollouts, mean reward ${result.meanReward.toFixed(3)}; store: ${values.store}\n`,
);
