import { randomInt } from 'node:crypto';
import { UserError, ValidationError } from '@agl/core/errors';
import { SeededRng } from '../model/rng';
import { DEFAULT_TINY_CONFIG, type TinyConfig } from '../model/tiny-config';
import { initWeights, type TinyWeights } from '../model/tiny-weights';
import { WeightStore } from '../model/weight-store';
import type { GenerationParams } from '../model/sequence';
import { TinyTokenizer, type TokenizerSpec } from '../tokenizer/tiny-tokenizer';
import { InferenceEngine } from '../worker/inference-engine';

/** What a request sees of the served weights: captured once, so a swap never mixes versions inside a request. */
export interface ServedModel {
  version: string;
  /** The served model id: `<modelName>@<version>`. */
  modelId: string;
  tokenizer: TinyTokenizer;
  config: TinyConfig;
}

/** Options of {@link TinyModelHost.start}. */
export interface TinyModelHostOptions {
  /** Directory of versioned weight files. */
  weightsDir: string;
  /** Version to serve first; default the latest in the directory. */
  version?: string;
  /** Base of the served model id. Default `agl-tiny`. */
  modelName?: string;
  /** When the directory is empty: create version `v0` with fresh weights of this shape (default config, seed 0). */
  init?: { config?: Partial<Omit<TinyConfig, 'vocabSize'>>; tokenizer?: TokenizerSpec; seed?: number };
  /**
   * Seed of the per-request seeds given to requests that send no `seed`. Set it for reproducible runs; leave it unset
   * for random seeds. A request's seed is derived from this seed, the served version, the prompt's token ids and how
   * many times that prompt was sampled before on that version, so concurrent requests get the same seeds whatever
   * order they arrive in (the n-th sample of a prompt is always drawn the same way).
   */
  samplingSeed?: number;
  /**
   * Memory for the inference worker's prefix cache (the KV caches of recent prompts and answers, reused when a prompt
   * starts like one of them), in MiB. Default 32; 0 turns it off.
   */
  prefixCacheMiB?: number;
}

/** Owns the inference worker and the currently served weights version. */
export class TinyModelHost {
  readonly store: WeightStore;
  readonly engine: InferenceEngine;
  readonly modelName: string;
  #current: ServedModel | undefined;
  readonly #samplingSeed: number | undefined;
  /** Per served version: how many times each prompt (by hash) was given a derived seed. */
  #promptCounts = new Map<string, Map<number, number>>();
  #loading: Promise<ServedModel> = Promise.resolve(undefined as unknown as ServedModel);

  private constructor(
    store: WeightStore,
    modelName: string,
    samplingSeed: number | undefined,
    prefixCacheMiB: number | undefined,
  ) {
    this.store = store;
    this.modelName = modelName;
    this.#samplingSeed = samplingSeed;
    this.engine = new InferenceEngine({
      prefixCacheBytes: prefixCacheMiB === undefined ? undefined : prefixCacheMiB * 1024 * 1024,
    });
  }

  /** Starts the worker and loads the first version (creating `v0` when the directory is empty and `init` allows). */
  static async start(options: TinyModelHostOptions): Promise<TinyModelHost> {
    const { prefixCacheMiB } = options;
    if (prefixCacheMiB !== undefined && !(prefixCacheMiB >= 0))
      throw new UserError(
        `prefixCacheMiB must be a number of MiB, 0 or more (0 turns the prefix cache off); got ${String(prefixCacheMiB)}.`,
      );
    const store = new WeightStore({ dir: options.weightsDir });
    let version = options.version ?? (await store.latest());
    if (version === undefined) {
      const tokenizer = options.init?.tokenizer ?? { kind: 'byte-bpe', merges: [] };
      const vocabSize = new TinyTokenizer(tokenizer).vocabSize;
      const weights = initWeights({
        config: { ...DEFAULT_TINY_CONFIG, ...options.init?.config, vocabSize },
        tokenizer,
        seed: options.init?.seed ?? 0,
      });
      version = 'v0';
      await store.save({ weights, version, meta: { init: true, seed: options.init?.seed ?? 0 } });
    }
    const host = new TinyModelHost(store, options.modelName ?? 'agl-tiny', options.samplingSeed, prefixCacheMiB);
    try {
      await host.loadWeights(version);
    } catch (err) {
      await host.engine.close();
      throw err;
    }
    return host;
  }

  /**
   * Resolves a request's `model` that names other weights than the served version: a `tinker://…/sampler_weights/…`
   * path (set by the Tinker routes, so an OpenAI client samples a checkpoint saved through the Tinker API).
   */
  resolveModel: ((model: string) => Promise<ServedModel>) | undefined;

  /**
   * The weights a request's `model` names: a tinker:// sampler path (bare, or as `<modelName>@tinker://…`, the form a
   * gateway without Tinker sampling forwards as an ordinary model name) when one is given, else the served version.
   */
  async servedFor(model: string | undefined): Promise<ServedModel> {
    const path = model?.startsWith(`${this.modelName}@tinker://`) ? model.slice(this.modelName.length + 1) : model;
    if (path?.startsWith('tinker://') && this.resolveModel) return this.resolveModel(path);
    return this.current;
  }

  /** The served weights. */
  get current(): ServedModel {
    if (!this.#current) throw new UserError('No weights are loaded yet; call loadWeights(version) first.');
    return this.#current;
  }

  /**
   * Loads a saved version and makes it the served one once the worker holds it. Requests that started earlier finish
   * on the weights they started with; requests after the swap use the new ones. Loads are serialised.
   */
  loadWeights(version: string): Promise<ServedModel> {
    this.#loading = this.#loading
      .catch(() => undefined)
      .then(async () => {
        const { weights } = await this.store.load(version);
        return this.#install(version, weights);
      });
    return this.#loading;
  }

  /** Serves in-memory weights as `version` (saved to the directory first, so the version stays loadable). */
  async publishWeights(options: {
    version: string;
    weights: TinyWeights;
    meta?: Record<string, unknown>;
  }): Promise<ServedModel> {
    await this.store.save({ weights: options.weights, version: options.version, meta: options.meta });
    return this.loadWeights(options.version);
  }

  /** Checks a prompt fits and fills in generation parameters. */
  generationParams(options: {
    served: ServedModel;
    promptIds: number[];
    maxTokens: number | undefined;
    temperature: number;
    topP: number;
    seed: number | undefined;
    topLogprobs: number;
    forcedPrefix?: number[];
    bannedIds?: number[];
  }): GenerationParams {
    const { config, tokenizer } = options.served;
    const room = config.maxSeqLen - options.promptIds.length;
    if (room < 1) {
      throw new ValidationError(
        `The prompt has ${options.promptIds.length} tokens; this model's context is ${config.maxSeqLen}. Shorten the messages.`,
        [{ path: 'messages', message: 'prompt too long' }],
        { status: 400 },
      );
    }
    for (const id of options.promptIds) {
      if (!Number.isInteger(id) || id < 0 || id >= config.vocabSize) {
        throw new ValidationError(
          `prompt: token id ${id} is outside the vocabulary (0..${config.vocabSize - 1}).`,
          [{ path: 'prompt', message: 'bad token id' }],
          { status: 400 },
        );
      }
    }
    return {
      promptIds: options.promptIds,
      maxTokens: Math.min(options.maxTokens ?? room, room),
      temperature: options.temperature,
      topP: options.topP,
      seed: options.seed ?? this.#derivedSeed(options.served.version, options.promptIds),
      stopIds: [tokenizer.specialId('<|end|>')],
      forcedPrefix: options.forcedPrefix,
      bannedIds: options.bannedIds,
      topLogprobs: options.topLogprobs,
    };
  }

  /** The seed of a seedless request: random, or (with `samplingSeed`) a function of version, prompt and repeat count. */
  #derivedSeed(version: string, promptIds: number[]): number {
    if (this.#samplingSeed === undefined) return randomInt(0, 2 ** 31);
    let counts = this.#promptCounts.get(version);
    if (!counts) {
      // Only the versions still being asked for matter; an older one's counts go when a third version arrives.
      if (this.#promptCounts.size >= 2) this.#promptCounts.delete(this.#promptCounts.keys().next().value!);
      counts = new Map();
      this.#promptCounts.set(version, counts);
    }
    const key = hashIds(promptIds);
    const seen = counts.get(key) ?? 0;
    counts.set(key, seen + 1);
    return new SeededRng((this.#samplingSeed ^ Math.imul(key, 0x85ebca6b) ^ Math.imul(seen + 1, 0xc2b2ae35)) >>> 0).int(
      2 ** 31,
    );
  }

  /** Stops the worker. */
  async close(): Promise<void> {
    await this.engine.close();
  }

  async #install(version: string, weights: TinyWeights): Promise<ServedModel> {
    const served: ServedModel = {
      version,
      modelId: `${this.modelName}@${version}`,
      tokenizer: new TinyTokenizer(weights.tokenizer),
      config: weights.config,
    };
    const previous = this.#current;
    await this.engine.load(version, weights);
    this.#current = served;
    if (previous && previous.version !== version) this.engine.unload(previous.version);
    return served;
  }
}

/** FNV-1a over token ids (32-bit). */
function hashIds(ids: number[]): number {
  let h = 0x811c9dc5;
  for (const id of ids) {
    h = Math.imul(h ^ (id & 0xffff), 0x01000193);
    h = Math.imul(h ^ (id >>> 16), 0x01000193);
  }
  return h >>> 0;
}
