import { loadavg } from 'node:os';
import { InferenceModel } from './model/inference-model';
import { generateSync } from './model/sequence';
import { countParams, DEFAULT_TINY_CONFIG, type TinyConfig } from './model/tiny-config';
import { initWeights } from './model/tiny-weights';
import { TinyTokenizer } from './tokenizer/tiny-tokenizer';
import { TrainerCore } from './train/trainer-core';

/** One row of the size/speed table. */
export interface BenchRow {
  params: number;
  config: Omit<TinyConfig, 'vocabSize'>;
  /** Single-sequence decode speed with the KV cache (64-token prompt, 128 new tokens). */
  tokensPerSecond: number;
  /** Eight sequences decoded as one batch: total tokens per second. */
  batchedTokensPerSecond: number;
  /** One SFT Adam step on 8 × 128 = 1,024 tokens, in ms (median of 3 after a warm-up). */
  sftStepMs: number;
  /** The same three figures from process CPU time instead of wall time: what an idle core would give. */
  cpu: { tokensPerSecond: number; batchedTokensPerSecond: number; sftStepMs: number };
  /** 1-minute load average while measuring (the machine is shared). */
  loadAverage: number;
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

/** Measures generation and training speed for a config (in this thread; run it alone for clean numbers). */
export async function benchmark(options: { config?: Partial<Omit<TinyConfig, 'vocabSize'>> } = {}): Promise<BenchRow> {
  const tok = new TinyTokenizer();
  const config: TinyConfig = { ...DEFAULT_TINY_CONFIG, ...options.config, vocabSize: tok.vocabSize };
  const weights = initWeights({ config, tokenizer: tok.spec, seed: 1 });
  const model = new InferenceModel(weights);
  const prompt = Array.from({ length: 64 }, (_, i) => 97 + (i % 26));
  const gen = { promptIds: prompt, maxTokens: 128, temperature: 1, topP: 1, seed: 1, stopIds: [], topLogprobs: 0 };
  generateSync(model, { ...gen, maxTokens: 8 });
  let t0 = performance.now();
  let c0 = cpuMs();
  const one = generateSync(model, gen);
  const tokensPerSecond = (one.tokens.length / (performance.now() - t0)) * 1000;
  const cpuTokensPerSecond = (one.tokens.length / (cpuMs() - c0)) * 1000;
  const caches = Array.from({ length: 8 }, () => model.newCache());
  for (const c of caches) model.prefill(c, prompt);
  t0 = performance.now();
  c0 = cpuMs();
  for (let s = 0; s < 128; s++)
    model.forward(caches.map((cache) => ({ cache, token: 97 + (s % 26), wantLogits: true })));
  const batchedTokensPerSecond = ((8 * 128) / (performance.now() - t0)) * 1000;
  const cpuBatched = ((8 * 128) / (cpuMs() - c0)) * 1000;
  const core = await TrainerCore.create({ weights });
  const rows = Array.from({ length: 8 }, (_, b) => {
    const ids = Array.from({ length: 129 }, (_, i) => 97 + ((i + b) % 26));
    return { ids, mask: ids.map(() => 1) };
  });
  core.sftStep(rows);
  const times: number[] = [];
  const cpuTimes: number[] = [];
  for (let i = 0; i < 3; i++) {
    c0 = cpuMs();
    times.push(core.sftStep(rows).ms);
    cpuTimes.push(cpuMs() - c0);
  }
  core.dispose();
  times.sort((a, b) => a - b);
  cpuTimes.sort((a, b) => a - b);
  const { vocabSize: _v, ...shape } = config;
  return {
    params: countParams(config),
    config: shape,
    tokensPerSecond,
    batchedTokensPerSecond,
    sftStepMs: times[1]!,
    cpu: { tokensPerSecond: cpuTokensPerSecond, batchedTokensPerSecond: cpuBatched, sftStepMs: cpuTimes[1]! },
    loadAverage: loadavg()[0]!,
  };
}
