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

/** A tiny shape for tests (about 30k parameters). */
export const TEST_CONFIG = { dModel: 32, nLayers: 2, nHeads: 2, dFF: 64, maxSeqLen: 160 };

export const CALC_TOOL: WireTool = {
  type: 'function',
  function: { name: 'calc', description: 'Evaluates arithmetic.', parameters: { type: 'object', properties: { e: { type: 'string' } } } },
};

/** Two behaviours to memorise: "add" calls the tool; "hi" answers in text; a tool result is read back. */
export const TOOL_EXAMPLES: SftExample[] = [
  {
    tools: [CALC_TOOL],
    messages: [
      { role: 'user', content: 'add 2 3' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calc', arguments: '{"e":"2+3"}' } }] },
    ],
  },
  {
    tools: [CALC_TOOL],
    messages: [
      { role: 'user', content: 'add 2 3' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calc', arguments: '{"e":"2+3"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: '5' },
      { role: 'assistant', content: 'It is 5.' },
    ],
  },
  { messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Hello there! ✓' }] },
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

/** A temp weights directory with `v0` (random) and `v1` (trained to call the tool). */
export async function toolModelDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agl-tiny-'));
  const store = new WeightStore({ dir });
  await store.save({ weights: randomTestWeights(3), version: 'v0' });
  await store.save({ weights: await trainToolWeights(), version: 'v1' });
  return dir;
}
