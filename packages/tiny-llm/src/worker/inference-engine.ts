import type { Worker } from 'node:worker_threads';
import { AglError } from '@agl/core/errors';
import type { FinishReason, GeneratedToken, GenerationParams } from '../model/sequence';
import type { TinyWeights } from '../model/tiny-weights';
import type { InferenceEvent, InferenceRequest } from './protocol';
import { spawnWorker } from './spawn-worker';

/** One finished choice. */
export interface EngineChoice {
  tokens: GeneratedToken[];
  finishReason: FinishReason;
  /** Prompt positions whose keys and values came from the worker's prefix cache (OpenAI's `cached_tokens`). */
  cachedTokens: number;
}

/** A generation in flight. */
export interface EngineGeneration {
  /** Resolves with every choice when all are done. */
  result: Promise<EngineChoice[]>;
  /** Stops generating; `result` resolves with what was produced, finish reason `stop`. */
  cancel(): void;
}

interface Pending {
  n: number;
  choices: Array<{ tokens: GeneratedToken[]; finishReason?: FinishReason }>;
  onTokens: ((index: number, tokens: GeneratedToken[]) => void) | undefined;
  resolve: (c: EngineChoice[]) => void;
  reject: (e: Error) => void;
  remaining: number;
  cachedTokens: number;
}

/** A generation's choices as they stand (a choice not finished yet counts as stopped). */
function finishedChoices(p: Pending): EngineChoice[] {
  return p.choices.map((c) => ({
    tokens: c.tokens,
    finishReason: c.finishReason ?? 'stop',
    cachedTokens: p.cachedTokens,
  }));
}

/** The main-thread handle of the inference worker: load weights, generate, cancel. */
export class InferenceEngine {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #scores = new Map<number, { resolve: (v: Array<number | null>) => void; reject: (e: Error) => void }>();
  readonly #loads = new Map<string, Array<{ resolve: () => void; reject: (e: Error) => void }>>();
  #nextId = 1;
  #closed = false;

  /** `prefixCacheBytes`: memory for the worker's prefix cache (default: `PrefixCache`'s 32 MiB; 0 turns it off). */
  constructor(options: { prefixCacheBytes?: number } = {}) {
    this.#worker = spawnWorker('inference-worker', { prefixCacheBytes: options.prefixCacheBytes });
    this.#worker.on('message', (e: InferenceEvent) => this.#onEvent(e));
    this.#worker.on('error', (err) => this.#failAll(err));
    this.#worker.on('exit', (code) => {
      if (!this.#closed) this.#failAll(new AglError(`tiny-llm inference worker exited with code ${code}.`));
    });
  }

  /** Loads a weights version into the worker (the copy is transferred; the caller's arrays become unusable). */
  load(version: string, weights: TinyWeights): Promise<void> {
    return new Promise((resolve, reject) => {
      const list = this.#loads.get(version) ?? [];
      list.push({ resolve, reject });
      this.#loads.set(version, list);
      const msg: InferenceRequest = { type: 'load', version, weights };
      this.#worker.postMessage(
        msg,
        Object.values(weights.params).map((a) => a.buffer as ArrayBuffer),
      );
    });
  }

  /** Frees a version in the worker (requests already running on it keep their reference). */
  unload(version: string): void {
    this.#post({ type: 'unload', version });
  }

  /** Starts `n` sequences from one prompt; `onTokens` sees tokens as they come. */
  generate(options: {
    version: string;
    params: GenerationParams;
    n?: number;
    onTokens?: (index: number, tokens: GeneratedToken[]) => void;
  }): EngineGeneration {
    const id = this.#nextId++;
    const n = options.n ?? 1;
    const result = new Promise<EngineChoice[]>((resolve, reject) => {
      if (this.#closed) {
        reject(new AglError('The tiny-llm engine is closed; start a new server.'));
        return;
      }
      this.#pending.set(id, {
        n,
        choices: Array.from({ length: n }, () => ({ tokens: [] })),
        onTokens: options.onTokens,
        resolve,
        reject,
        remaining: n,
        cachedTokens: 0,
      });
    });
    this.#post({ type: 'generate', id, version: options.version, params: options.params, n });
    return {
      result,
      cancel: () => {
        const p = this.#pending.get(id);
        if (!p) return;
        this.#post({ type: 'cancel', id });
        this.#pending.delete(id);
        p.resolve(finishedChoices(p));
      },
    };
  }

  /** The logprob of each of `ids` after the ones before it (the first is null), one full forward, no cache reuse. */
  score(version: string, ids: number[]): Promise<Array<number | null>> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (this.#closed) {
        reject(new AglError('The tiny-llm engine is closed; start a new server.'));
        return;
      }
      this.#scores.set(id, { resolve, reject });
      this.#post({ type: 'score', id, version, ids });
    });
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#failAll(new AglError('The tiny-llm engine was closed while generating.'));
    await this.#worker.terminate();
  }

  #post(msg: InferenceRequest): void {
    if (!this.#closed) this.#worker.postMessage(msg);
  }

  #onEvent(e: InferenceEvent): void {
    if (e.type === 'loaded') {
      for (const r of this.#loads.get(e.version) ?? []) r.resolve();
      this.#loads.delete(e.version);
      return;
    }
    const score = this.#scores.get((e as { id: number }).id);
    if (score && (e.type === 'scored' || e.type === 'error')) {
      this.#scores.delete(e.id);
      if (e.type === 'scored') score.resolve(e.logprobs);
      else score.reject(new AglError(e.message));
      return;
    }
    if (e.type === 'scored') return;
    const p = this.#pending.get(e.id);
    if (!p) return;
    if (e.type === 'prefilled') {
      p.cachedTokens = e.cachedTokens;
    } else if (e.type === 'tokens') {
      p.choices[e.index]!.tokens.push(...e.tokens);
      p.onTokens?.(e.index, e.tokens);
    } else if (e.type === 'done') {
      p.choices[e.index]!.finishReason = e.finishReason;
      if (--p.remaining === 0) {
        this.#pending.delete(e.id);
        p.resolve(finishedChoices(p));
      }
    } else {
      this.#pending.delete(e.id);
      p.reject(new AglError(e.message));
    }
  }

  #failAll(err: Error): void {
    for (const p of this.#pending.values()) p.reject(err);
    this.#pending.clear();
    for (const p of this.#scores.values()) p.reject(err);
    this.#scores.clear();
    for (const list of this.#loads.values()) for (const l of list) l.reject(err);
    this.#loads.clear();
  }
}
