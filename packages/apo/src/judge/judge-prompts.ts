/** The judge's instructions and structured-output schemas (rubric: one transcript; group: N attempts of one task). */

export const RUBRIC_SYSTEM = [
  'You are a careful, strict evaluator of an AI agent.',
  'Read the rubric, then the transcript of one run of the agent (its task, the messages, tool calls and results, and',
  'its final answer). Score how well the run satisfies the rubric as a reward between 0 (fails it) and 1 (fully',
  'satisfies it), and give a short rationale (one or two sentences).',
  'Answer with JSON only: {"reward": <number in [0, 1]>, "rationale": "<short text>"}.',
].join('\n');

export const GROUP_SYSTEM = [
  'You are a careful, strict evaluator of an AI agent.',
  'Read the rubric, then several runs of the agent on the same task, each in an <attempt id="..."> block. Compare',
  'the runs with each other: give each a reward between 0 and 1 so that better runs score higher, using the whole',
  'range where the runs differ, and a short rationale (one sentence) per run.',
  'Answer with JSON only: {"scores": [{"id": "<attempt id>", "reward": <number in [0, 1]>, "rationale": "<text>"}, ...]}',
  'with exactly one entry per attempt.',
].join('\n');

export function rubricUserMessage(rubric: string, transcript: string): string {
  return `<rubric>\n${rubric}\n</rubric>\n\n<transcript>\n${transcript}\n</transcript>`;
}

export function groupUserMessage(rubric: string, transcripts: readonly string[]): string {
  const attempts = transcripts.map((t, i) => `<attempt id="${i + 1}">\n${t}\n</attempt>`);
  return `<rubric>\n${rubric}\n</rubric>\n\n${attempts.join('\n\n')}`;
}

const SCORE = {
  type: 'object',
  properties: {
    reward: { type: 'number', minimum: 0, maximum: 1 },
    rationale: { type: 'string' },
  },
  required: ['reward', 'rationale'],
  additionalProperties: false,
} as const;

export const RUBRIC_RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: { name: 'judge_score', strict: true, schema: SCORE },
};

export const GROUP_RESPONSE_FORMAT = {
  type: 'json_schema',
  json_schema: {
    name: 'judge_group_scores',
    strict: true,
    schema: {
      type: 'object',
      properties: {
        scores: {
          type: 'array',
          items: {
            type: 'object',
            properties: { id: { type: 'string' }, ...SCORE.properties },
            required: ['id', 'reward', 'rationale'],
            additionalProperties: false,
          },
        },
      },
      required: ['scores'],
      additionalProperties: false,
    },
  },
};
