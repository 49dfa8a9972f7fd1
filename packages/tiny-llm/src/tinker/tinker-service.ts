import { randomUUID } from 'node:crypto';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { NotFoundError } from '@agl/core/errors';
import { WeightStore } from '../model/weight-store';
import type { TinyWeights } from '../model/tiny-weights';
import type { ServedModel, TinyModelHost } from '../server/tiny-model-host';
import { loadCheckpoint } from '../train/checkpoint';
import { PRIMITIVE_LOSSES, type AdamStepParams, type PrimitiveLoss } from '../train/primitive-steps';
import { TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { TinyTrainer } from '../worker/tiny-trainer';
import { FutureRegistry, SeqQueue } from './tinker-futures';
import { TinkerTokenizers } from './tinker-tokenizer';
import { checkName, encodeId, parseTinkerPath, type TinkerPath } from './tinker-paths';
import { badField, toPrimitiveDatum } from './tinker-wire';

interface TrainingModel {
  modelId: string;
  baseModel: string;
  loraRank: number;
  tokenizerId: string;
  trainer: TinyTrainer;
  queue: SeqQueue;
}

interface SamplingSession {
  id: string;
  baseModel: string;
  modelPath: string | null;
  /** The engine key of its weights. */
  key: string;
}

/**
 * The embedded policy behind Tinker's API: sessions, training models (each a `TinyTrainer` worker, full weights; the
 * LoRA rank is recorded, not used), `forward_backward` / `optim_step` in seq_id order, checkpoints as files under
 * `<weightsDir>/tinker/`, and sampling from any saved sampler path or stored version through the inference worker.
 */
export class TinkerService {
  readonly host: TinyModelHost;
  readonly futures: FutureRegistry;
  /** The tokenizers `get_info` names, served by `GET /api/v1/tokenizer`. */
  readonly tokenizers = new TinkerTokenizers();
  readonly #dir: string;
  readonly #sessions = new Map<string, { lastHeartbeat: number; models: number; samplers: number }>();
  readonly #models = new Map<string, TrainingModel>();
  readonly #sampling = new Map<string, SamplingSession>();
  /** Engine keys loaded for sampling (path or base version) → their served model; oldest first. */
  readonly #loaded = new Map<string, Promise<ServedModel>>();
  readonly #maxLoaded = 6;

  constructor(options: { host: TinyModelHost; weightsDir: string; longPollMs?: number }) {
    this.host = options.host;
    this.#dir = join(options.weightsDir, 'tinker');
    this.futures = new FutureRegistry({ longPollMs: options.longPollMs });
  }

  /** The base-model names this server trains and samples: `<modelName>` (the served version) and `<modelName>@<v>`. */
  async baseModels(): Promise<string[]> {
    const name = this.host.modelName;
    return [name, ...(await this.host.store.list()).map((v) => `${name}@${v}`)];
  }

  createSession(): string {
    const id = randomUUID();
    this.#sessions.set(id, { lastHeartbeat: Date.now(), models: 0, samplers: 0 });
    return id;
  }

  heartbeat(sessionId: string): void {
    this.#session(sessionId).lastHeartbeat = Date.now();
  }

  /** `create_model`: a training model from a base model's weights; its id is `<session>:train:<model_seq_id>`. */
  async createModel(o: {
    sessionId: string;
    modelSeqId?: number;
    baseModel: string;
    loraRank: number;
  }): Promise<string> {
    const session = this.#session(o.sessionId);
    const seq = o.modelSeqId ?? session.models;
    session.models = Math.max(session.models, seq + 1);
    const modelId = `${o.sessionId}:train:${seq}`;
    const weights = await this.#baseWeights(o.baseModel);
    const trainer = await TinyTrainer.create({
      weightsDir: this.host.store.dir,
      weights,
      optimizer: { maxGradNorm: 0 },
    });
    await this.#models.get(modelId)?.trainer.close();
    this.#models.set(modelId, {
      modelId,
      baseModel: o.baseModel,
      loraRank: o.loraRank,
      tokenizerId: this.tokenizers.register(new TinyTokenizer(weights.tokenizer)),
      trainer,
      queue: new SeqQueue(),
    });
    return modelId;
  }

  /** `get_info`: `tokenizer_id` (`agl-tiny/<vocab>-<hash>`) names the tokenizer `GET /api/v1/tokenizer` serves. */
  info(modelId: string): Record<string, unknown> {
    const m = this.model(modelId);
    return {
      type: 'get_info',
      model_id: modelId,
      model_data: { arch: 'agl-tiny', model_name: m.baseModel, tokenizer_id: m.tokenizerId },
      is_lora: false,
      lora_rank: m.loraRank,
      model_name: m.baseModel,
    };
  }

  model(modelId: string): TrainingModel {
    const m = this.#models.get(modelId);
    if (!m)
      throw new NotFoundError('model', modelId, `No training model "${modelId}"; create it with create_model first.`);
    return m;
  }

  /** `forward_backward` (or forward only) with one of the supported losses. */
  forwardBackward(o: {
    modelId: string;
    seqId?: number;
    data: unknown[];
    lossFn: string;
    lossFnConfig?: Record<string, number>;
    forwardOnly: boolean;
  }) {
    const m = this.model(o.modelId);
    if (!(PRIMITIVE_LOSSES as readonly string[]).includes(o.lossFn))
      throw badField(
        'forward_backward_input.loss_fn',
        `"${o.lossFn}" is not supported by the embedded policy; use ${PRIMITIVE_LOSSES.join(', ')}.`,
      );
    const datums = o.data.map((d, i) => toPrimitiveDatum(d, i));
    return m.queue.run(o.seqId, () =>
      m.trainer.forwardBackward({
        datums,
        lossFn: o.lossFn as PrimitiveLoss,
        lossFnConfig: o.lossFnConfig,
        forwardOnly: o.forwardOnly,
      }),
    );
  }

  optimStep(modelId: string, seqId: number | undefined, params: AdamStepParams) {
    const m = this.model(modelId);
    return m.queue.run(seqId, () => m.trainer.optimStep(params));
  }

  /** `save_weights`: weights and Adam state, resumable with `load_weights`. */
  async saveWeights(modelId: string, seqId: number | undefined, name: string): Promise<string> {
    checkName(name, 'path');
    const m = this.model(modelId);
    const path = `tinker://${modelId}/weights/${name}`;
    const file = this.#file({ modelId, kind: 'weights', name });
    await mkdir(join(file, '..'), { recursive: true });
    await m.queue.run(seqId, () =>
      m.trainer.saveCheckpoint({ path: file, meta: { tinkerPath: path, baseModel: m.baseModel } }),
    );
    return path;
  }

  /** `save_weights_for_sampler`: the weights as a sampler checkpoint (and, unnamed, a sampling session on them). */
  async saveForSampler(o: {
    modelId: string;
    seqId?: number;
    name?: string;
    samplingSessionSeqId?: number;
  }): Promise<{ path: string; sampling_session_id?: string }> {
    const m = this.model(o.modelId);
    const name = o.name ?? `ss${o.samplingSessionSeqId ?? 0}_seq${o.seqId ?? 0}`;
    checkName(name, 'path');
    const path = `tinker://${o.modelId}/sampler_weights/${name}`;
    const dir = join(this.#file({ modelId: o.modelId, kind: 'sampler_weights', name }), '..');
    await m.queue.run(o.seqId, async () => {
      await mkdir(dir, { recursive: true });
      await new WeightStore({ dir }).save({
        weights: await m.trainer.weights(),
        version: name,
        meta: { tinkerPath: path, baseModel: m.baseModel },
        overwrite: true,
      });
    });
    if (o.name !== undefined) return { path };
    const sessionId = o.modelId.split(':train:')[0]!;
    const id = await this.createSamplingSession({ sessionId, modelPath: path, seq: o.samplingSessionSeqId });
    return { path, sampling_session_id: id };
  }

  /** `load_weights`: weights (and, with `optimizer`, Adam state) from a saved path into the model. */
  async loadWeights(modelId: string, seqId: number | undefined, path: string, optimizer: boolean): Promise<void> {
    const m = this.model(modelId);
    const p = parseTinkerPath(path);
    await m.queue.run(seqId, async () => {
      let next: TinyTrainer;
      if (p.kind === 'weights') {
        const file = this.#file(p);
        await this.#exists(file, path);
        next = optimizer
          ? await TinyTrainer.create({
              weightsDir: this.host.store.dir,
              checkpoint: file,
              optimizer: { maxGradNorm: 0 },
            })
          : await TinyTrainer.create({
              weightsDir: this.host.store.dir,
              weights: (await loadCheckpoint(file)).weights,
              optimizer: { maxGradNorm: 0 },
            });
      } else {
        next = await TinyTrainer.create({
          weightsDir: this.host.store.dir,
          weights: await this.#samplerWeights(path),
          optimizer: { maxGradNorm: 0 },
        });
      }
      await m.trainer.close();
      m.trainer = next;
    });
  }

  async unloadModel(modelId: string): Promise<void> {
    const m = this.model(modelId);
    this.#models.delete(modelId);
    await m.trainer.close();
  }

  /** `create_sampling_session`: from a sampler path, or a base model. */
  async createSamplingSession(o: {
    sessionId: string;
    seq?: number;
    modelPath?: string;
    baseModel?: string;
  }): Promise<string> {
    const session = this.#session(o.sessionId);
    const seq = o.seq ?? session.samplers;
    session.samplers = Math.max(session.samplers, seq + 1);
    const id = `${o.sessionId}:sample:${seq}`;
    const { key, baseModel } = await this.#samplingTarget(o.modelPath, o.baseModel);
    this.#sampling.set(id, { id, baseModel, modelPath: o.modelPath ?? null, key });
    return id;
  }

  sampler(id: string): SamplingSession {
    const s = this.#sampling.get(id);
    if (!s)
      throw new NotFoundError(
        'sampling session',
        id,
        `No sampling session "${id}"; create it with create_sampling_session.`,
      );
    return s;
  }

  /** The weights a sample request names: its sampling session, a `model_path`, or a `base_model`. */
  async servedForSample(o: {
    samplingSessionId?: string;
    modelPath?: string;
    baseModel?: string;
  }): Promise<ServedModel> {
    if (o.samplingSessionId) return this.served(this.sampler(o.samplingSessionId).key);
    return this.served((await this.#samplingTarget(o.modelPath, o.baseModel)).key);
  }

  /** The served model of an engine key (loading the weights into the inference worker when needed). */
  served(key: string): Promise<ServedModel> {
    const hit = this.#loaded.get(key);
    if (hit) {
      this.#loaded.delete(key);
      this.#loaded.set(key, hit);
      return hit;
    }
    const p = (async () => {
      const weights = key.startsWith('tinker://')
        ? await this.#samplerWeights(key)
        : (await this.host.store.load(key.slice('base:'.length))).weights;
      const served: ServedModel = {
        version: key,
        modelId: key.startsWith('tinker://') ? key : `${this.host.modelName}@${key.slice('base:'.length)}`,
        tokenizer: new TinyTokenizer(weights.tokenizer),
        config: weights.config,
      };
      await this.host.engine.load(key, weights);
      return served;
    })();
    p.catch(() => this.#loaded.delete(key));
    this.#loaded.set(key, p);
    while (this.#loaded.size > this.#maxLoaded) {
      const oldest = this.#loaded.keys().next().value!;
      this.#loaded.delete(oldest);
      this.host.engine.unload(oldest);
    }
    return p;
  }

  /** The tokenizer of a base model name or a `tinker://` sampler path. */
  async tokenizerOf(model: string): Promise<TinyTokenizer> {
    const file = model.startsWith('tinker://') ? await this.#samplerWeights(model) : await this.#baseWeights(model);
    return new TinyTokenizer(file.tokenizer);
  }

  /** `weights_info` for a path. */
  async weightsInfo(path: string): Promise<Record<string, unknown>> {
    const p = parseTinkerPath(path, 'tinker_path');
    await this.#exists(this.#file(p), path);
    const m = this.#models.get(p.modelId);
    return { base_model: m?.baseModel ?? this.host.modelName, is_lora: false };
  }

  /** `training_runs/{id}/checkpoints`. */
  async checkpoints(modelId: string): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    for (const kind of ['weights', 'sampler_weights'] as const) {
      const dir = join(this.#dir, encodeId(modelId), kind);
      const files = await readdir(dir).catch(() => [] as string[]);
      for (const f of files.filter((x) => !x.endsWith('.tmp')).sort()) {
        const name = f.replace(/\.(ckpt|agltiny)$/, '');
        const s = await stat(join(dir, f));
        out.push({
          checkpoint_id: `${kind}/${name}`,
          checkpoint_type: kind === 'weights' ? 'training' : 'sampler',
          time: s.mtime.toISOString(),
          tinker_path: `tinker://${modelId}/${kind}/${name}`,
          size_bytes: s.size,
          public: false,
        });
      }
    }
    return out;
  }

  async close(): Promise<void> {
    for (const m of this.#models.values()) await m.trainer.close().catch(() => undefined);
    this.#models.clear();
  }

  #session(id: string) {
    const s = this.#sessions.get(id);
    if (!s) throw new NotFoundError('session', id, `No session "${id}"; call create_session first.`);
    return s;
  }

  async #samplingTarget(modelPath?: string, baseModel?: string): Promise<{ key: string; baseModel: string }> {
    if (modelPath) {
      const p = parseTinkerPath(modelPath, 'model_path');
      if (p.kind !== 'sampler_weights' && p.kind !== 'weights')
        throw badField('model_path', 'must name sampler weights.');
      await this.#exists(this.#file({ ...p, kind: 'sampler_weights' }), modelPath);
      return { key: modelPath, baseModel: this.#models.get(p.modelId)?.baseModel ?? this.host.modelName };
    }
    if (!baseModel) throw badField('base_model', 'is required when no model_path or sampling_session_id is given.');
    return { key: `base:${await this.baseVersion(baseModel)}`, baseModel };
  }

  /** The stored version a base-model name serves (400 naming `base_model` when it is none). */
  async baseVersion(baseModel: string): Promise<string> {
    const name = this.host.modelName;
    if (baseModel === name) return this.host.current.version;
    if (baseModel.startsWith(`${name}@`)) {
      const v = baseModel.slice(name.length + 1);
      if ((await this.host.store.list()).includes(v)) return v;
    }
    throw badField(
      'base_model',
      `"${baseModel}" is not served here; use one of: ${(await this.baseModels()).join(', ')}.`,
    );
  }

  async #baseWeights(baseModel: string): Promise<TinyWeights> {
    return (await this.host.store.load(await this.baseVersion(baseModel))).weights;
  }

  async #samplerWeights(path: string): Promise<TinyWeights> {
    const p = parseTinkerPath(path, 'model_path');
    const file = this.#file({ ...p, kind: 'sampler_weights' });
    await this.#exists(file, path);
    return (await new WeightStore({ dir: join(file, '..') }).load(p.name)).weights;
  }

  #file(p: TinkerPath): string {
    checkName(p.name, 'path');
    return join(this.#dir, encodeId(p.modelId), p.kind, `${p.name}${p.kind === 'weights' ? '.ckpt' : '.agltiny'}`);
  }

  async #exists(file: string, path: string): Promise<void> {
    try {
      await stat(file);
    } catch {
      throw new NotFoundError(
        'checkpoint',
        path,
        `No checkpoint at ${path}; save it first (save_weights / save_weights_for_sampler).`,
      );
    }
  }
}
