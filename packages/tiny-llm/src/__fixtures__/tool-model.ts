import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { WireTool } from '../chat/chat-types';
import type { TinyConfig } from '../model/tiny-config';
import { initWeights, type TinyWeights } from '../model/tiny-weights';
import { WeightStore } from '../model/weight-store';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { TrainerCore } from '../train/trainer-core';
import type { SftExample } from '../train/train-types';
import { TinyTrainer } from '../worker/tiny-trainer';

/** A tiny shape for tests (about 30k parameters). */
export const TEST_CONFIG = { dModel: 32, nLayers: 2, nHeads: 2, dFF: 64, maxSeqLen: 160 };

export const CALC_TOOL: WireTool = {
  type: 'function',
  function: {
    name: 'calc',
    description: 'Evaluates arithmetic.',
    parameters: { type: 'object', properties: { e: { type: 'string' } } },
  },
};

/** The user's "add 2 3" and the assistant's calc tool call it should answer with. */
const ADD_CALL: SftExample['messages'] = [
  { role: 'user', content: 'add 2 3' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calc', arguments: '{"e":"2+3"}' } }],
  },
];

/** Two behaviours to memorise: "add" calls the tool; "hi" answers in text; a tool result is read back. */
export const TOOL_EXAMPLES: SftExample[] = [
  { tools: [CALC_TOOL], messages: ADD_CALL },
  {
    tools: [CALC_TOOL],
    messages: [...ADD_CALL, { role: 'tool', tool_call_id: 'c1', content: '5' }, { role: 'assistant', content: 'It is 5.' }],
  },
  {
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello there! ✓' },
    ],
  },
];

/** Random weights of the test shape. */
export function randomTestWeights(seed: number, config: Partial<TinyConfig> = {}): TinyWeights {
  const tok = new TinyTokenizer();
  return initWeights({ config: { ...TEST_CONFIG, vocabSize: tok.vocabSize, ...config }, tokenizer: tok.spec, seed });
}

/** Trains the test model on {@link TOOL_EXAMPLES} until it has memorised them. */
export async function trainToolWeights(): Promise<TinyWeights> {
  const core = await TrainerCore.create({ weights: randomTestWeights(7), optimizer: { learningRate: 1e-2 } });
  const rows = core.sftRows(TOOL_EXAMPLES);
  for (let i = 0; i < 400 && core.sftStep(rows).loss > 0.02; i++);
  const w = core.weights();
  core.dispose();
  return w;
}

/** A temp weights directory (named `<prefix>…`) holding random weights of the test shape (`seed`) as `v0`. */
export async function randomWeightsDir(prefix: string, seed: number): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await new WeightStore({ dir }).save({ weights: randomTestWeights(seed), version: 'v0' });
  return dir;
}

/** A worker-thread trainer on `dir`'s latest weights as the tests train: learning rate 1e-2, the initial weights as reference. */
export function testTrainer(dir: string): Promise<TinyTrainer> {
  return TinyTrainer.create({ weightsDir: dir, optimizer: { learningRate: 1e-2 }, reference: 'initial' });
}

/** A temp weights directory with `v0` (random) and `v1` (trained to call the tool). */
export async function toolModelDir(): Promise<string> {
  const dir = await randomWeightsDir('agl-tiny-', 3);
  await new WeightStore({ dir }).save({ weights: await trainToolWeights(), version: 'v1' });
  return dir;
}
