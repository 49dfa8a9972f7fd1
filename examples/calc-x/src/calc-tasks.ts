import { SeededRng, type SftExample, type TokenizerSpec, type WireTool } from '@agl/tiny-llm';

/** One Calc-X task: `question` is `a<op>b`, `answer` the exact integer result as text. */
export interface CalcTask {
  id: string;
  question: string;
  answer: string;
}

/** The even operator mix: `+`, `-` and `*` equally often (validation tasks always use it). */
export const EVEN_OPS = '+-*';

/** Half products, a quarter each sums and differences: the demo's training mix (more 7–8 digit answers to copy). */
export const HALF_PRODUCTS = '+-**';

/** Operands 100–9999 whose hash falls in the held-out fifth are validation-only; the rest are for training. */
export function isValOperand(n: number): boolean {
  return (Math.imul(n, 2654435761) >>> 0) % 5 === 0;
}

/** Evaluates `a<op>b` (the calculator tool); anything else is an error string. */
export function evaluate(expression: string): string {
  const m = /^\s*(-?\d+)\s*([-+*])\s*(-?\d+)\s*$/.exec(expression);
  if (!m) return 'error';
  const a = BigInt(m[1]!);
  const b = BigInt(m[3]!);
  return String(m[2] === '+' ? a + b : m[2] === '-' ? a - b : a * b);
}

/**
 * Checks an operator mix: one or more of `+`, `-`, `*`, each drawn in proportion to how often it appears (`+-**`: half
 * of the tasks are products). Throws a message that names the value and the fix.
 */
export function parseOps(ops: string): string {
  if (!/^[-+*]+$/.test(ops))
    throw new Error(
      `the operator mix ${JSON.stringify(ops)} may hold only +, - and * (a repeat weighs an operator up), e.g. +-**`,
    );
  return ops;
}

/**
 * `n` seeded tasks on 3–4 digit operands, from the train or the held-out validation operands. `ops` is the operator
 * mix (see {@link parseOps}; default `+-*`, each equally often).
 */
export function makeTasks(options: { n: number; seed: number; split: 'train' | 'val'; ops?: string }): CalcTask[] {
  const ops = parseOps(options.ops ?? EVEN_OPS);
  const rng = new SeededRng(options.seed);
  const operand = (): number => {
    for (;;) {
      const v = 100 + rng.int(9900);
      if (isValOperand(v) === (options.split === 'val')) return v;
    }
  };
  return Array.from({ length: options.n }, (_, i) => {
    const a = operand();
    const b = operand();
    const op = ops[rng.int(ops.length)]!;
    const question = `${a}${op}${b}`;
    return { id: `${options.split}-${i}-${question}`, question, answer: evaluate(question) };
  });
}

/** The calculator as the agent's tools render it (`calc(e)`). */
export const CALC_TOOL: WireTool = {
  type: 'function',
  function: {
    name: 'calc',
    description: 'Evaluate an arithmetic expression such as 1234*567.',
    parameters: {
      type: 'object',
      properties: { e: { type: 'string', description: 'the expression' } },
      required: ['e'],
      additionalProperties: false,
    },
  },
};

/** A self-generated demonstration: call the tool with the question, then copy its result. */
export function demonstration(task: CalcTask): SftExample {
  return {
    tools: [CALC_TOOL],
    messages: [
      { role: 'user', content: task.question },
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          {
            id: 'call_0',
            type: 'function',
            function: { name: 'calc', arguments: JSON.stringify({ e: task.question }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: task.answer },
      { role: 'assistant', content: task.answer },
    ],
  };
}

/**
 * The digit-pair tokenizer (`--tokenizer digit-pairs`; the default until 2026-12-05): bytes plus one merge per digit
 * pair ("00" … "99"), so a number is about half as many tokens. Built from the digits alone; nothing is downloaded.
 * The default is now one token a digit (see {@link calcTokenizer}): no two digit tokens share a digit, so a miscopy
 * cannot swap one pair for a similar one.
 */
export const CALC_TOKENIZER: TokenizerSpec = {
  kind: 'byte-bpe',
  merges: Array.from({ length: 100 }, (_, i): [number, number] => [48 + Math.floor(i / 10), 48 + (i % 10)]),
};

/** The tokenizers a Calc-X policy can use: digit pairs ({@link CALC_TOKENIZER}) or plain bytes (one token a digit, the default). */
export const CALC_TOKENIZERS = ['digit-pairs', 'digits'] as const;

/** The tokenizer spec of a {@link CALC_TOKENIZERS} name. */
export function calcTokenizer(name: (typeof CALC_TOKENIZERS)[number]): TokenizerSpec {
  return name === 'digits' ? { kind: 'byte-bpe', merges: [] } : CALC_TOKENIZER;
}
