import { randomBytes, randomUUID } from 'node:crypto';
import { seededRandom } from '@agl/core';
import { modelInputTokens, type Datum } from '@agl/tinker';
import { BigramModel } from './bigram-model';
import { SKYRL_LOSSES, TINKER_LOSSES, WireRefusal, checkBatch, runBatch, runSample } from './tinker-training-ops';
import type {
  Future,
  StandInBaseModel,
  StandInCheckpoint,
  StandInModel,
  StandInSample,
  StandInState,
  WireBody,
} from './tinker-stand-in-types';

/** Runs a model's waiting requests whose turn has come, in seq_id order. */
function runInOrder(model: StandInModel): void {
  while (model.waiting.has(model.nextSeq)) {
    const next = model.waiting.get(model.nextSeq)!;
    model.waiting.delete(model.nextSeq);
    model.nextSeq++;
    next();
  }
}

/**
 * A training request refused at submit still uses up its seq_id, so the model's later requests do not wait for it
 * forever (a reused seq_id is not marked again).
 */
export function consumeRefusedSeq(s: StandInState, body: WireBody): void {
  const model = typeof body.model_id === 'string' ? s.models.get(body.model_id) : undefined;
  const seqId: unknown = body.seq_id;
  if (!model || typeof seqId !== 'number' || seqId < model.nextSeq || model.waiting.has(seqId)) return;
  model.waiting.set(seqId, () => {});
  runInOrder(model);
}

/** The stand-in's routes (all but retrieve_future), each answering a checked body or throwing a {@link WireRefusal}. */
export function standInRoutes(s: StandInState): Record<string, (body: WireBody) => unknown> {
  const { json, pendingScript, baseModels, random, sessions, models, checkpoints, samplers, futures, futureFaults } = s;
  const hex = () => randomBytes(4).toString('hex');

  const base = (name: string): StandInBaseModel => {
    const found = baseModels[name];
    if (!found)
      throw new WireRefusal(400, `Unknown base_model "${name}"; supported: ${Object.keys(baseModels).join(', ')}`);
    return found;
  };
  const modelOf = (id: unknown): StandInModel => {
    const found = models.get(String(id));
    if (!found) throw new WireRefusal(404, `Model '${String(id)}' not found`);
    return found;
  };

  /** Queues `run` behind earlier seq_ids of the model; its future settles when it runs. */
  function submit(model: StandInModel | undefined, seqId: unknown, kind: Future['kind'], run: () => unknown) {
    const id = json ? String(++s.futureCounter) : `${randomUUID()}`;
    const future: Future = { pending: [...pendingScript], metadataSent: false, kind, done: false };
    futures.set(id, future);
    const injected = futureFaults.get(s.currentPath);
    futureFaults.delete(s.currentPath);
    const exec = () => {
      try {
        if (injected !== undefined) throw new Error(injected);
        future.result = run();
      } catch (error) {
        future.error = (error as Error).message;
      }
      future.done = true;
    };
    if (!model || typeof seqId !== 'number') exec();
    else {
      if (seqId < model.nextSeq || model.waiting.has(seqId)) {
        futures.delete(id);
        throw new WireRefusal(409, 'Training request sequence number was reused');
      }
      model.waiting.set(seqId, exec);
      runInOrder(model);
    }
    return json
      ? { future_id: id, status: 'pending', request_id: id }
      : { request_id: id, ...(model ? { model_id: model.modelId } : {}) };
  }

  function saveCheckpoint(m: StandInModel, kind: StandInCheckpoint['kind'], name: string, overwrite: boolean) {
    if (!/^[A-Za-z0-9._-]+$/.test(name))
      throw new WireRefusal(400, `Invalid checkpoint name "${name}": use letters, digits, . _ -`);
    const path = `tinker://${m.modelId}/${kind}/${name}`;
    if (checkpoints.has(path) && !overwrite) {
      throw new WireRefusal(409, `Checkpoint '${name}' already exists for model '${m.modelId}'`);
    }
    return path;
  }

  function openSampler(sessionId: string, target: { model_path?: unknown; base_model?: unknown }): string {
    const session = sessions.get(sessionId);
    if (!session) throw new WireRefusal(404, 'Session not found');
    if ((target.model_path == null) === (target.base_model == null)) {
      throw new WireRefusal(400, 'Exactly one of base_model or model_path must be provided');
    }
    let sampler;
    if (target.model_path != null) {
      const ckpt = checkpoints.get(String(target.model_path));
      if (!ckpt || ckpt.kind !== 'sampler_weights') {
        throw new WireRefusal(
          400,
          `model_path must name saved sampler weights (tinker://<model_id>/sampler_weights/<name>); got ${String(target.model_path)}`,
        );
      }
      sampler = {
        model: BigramModel.fromSnapshot(base(ckpt.baseModel).vocabSize, ckpt.snapshot),
        baseModel: ckpt.baseModel,
        modelPath: String(target.model_path),
      };
    } else {
      const name = String(target.base_model);
      sampler = { model: new BigramModel(base(name).vocabSize), baseModel: name, modelPath: null };
    }
    const id = json ? `sampling_${hex()}` : `${sessionId}:sample:${session.samplers++}`;
    samplers.set(id, sampler);
    return id;
  }

  function fwdbwd(
    body: {
      model_id: string;
      seq_id?: number;
      input: { data: Datum[]; loss_fn: string; loss_fn_config?: Record<string, number> | null };
    },
    forwardOnly: boolean,
  ) {
    const m = modelOf(body.model_id);
    const batch = checkBatch(
      body.input.data,
      body.input.loss_fn,
      body.input.loss_fn_config,
      m.model.vocabSize,
      json ? SKYRL_LOSSES : TINKER_LOSSES,
      json,
    );
    return submit(m, body.seq_id, 'forward_backward', () => runBatch(m.model, batch, forwardOnly));
  }

  const routes: Record<string, (body: WireBody) => unknown> = {
    '/api/v1/client/config': () =>
      json
        ? { pjwt_auth_enabled: false }
        : {
            pjwt_auth_enabled: false,
            parallel_fwdbwd_chunks: true,
            proto_compress_fwdbwd: false,
            fwdbwd_max_chunk_len: 1024,
            fwdbwd_max_chunk_bytes_count: 5_000_000,
            ...s.clientConfig,
          },
    '/api/v1/client/dynamic_config': () => {
      if (json) throw new WireRefusal(404, 'Not Found');
      return { refresh_interval_sec: 300 };
    },
    '/api/v1/create_session': (b) => {
      const id = json ? `session_${hex()}` : randomUUID();
      sessions.set(id, { heartbeats: 0, tags: b.tags, models: 0, samplers: 0 });
      return { type: 'create_session', session_id: id };
    },
    '/api/v1/session_heartbeat': (b) => {
      const session = sessions.get(b.session_id);
      if (!session) throw new WireRefusal(404, 'Session not found');
      session.heartbeats++;
      return { type: 'session_heartbeat' };
    },
    '/api/v1/create_model': (b) => {
      const session = sessions.get(b.session_id);
      if (!session) throw new WireRefusal(404, 'Session not found');
      base(b.base_model);
      const rank = b.lora_config?.rank ?? 32;
      if (rank < 1) throw new WireRefusal(400, `lora_config.rank must be a positive integer; got ${rank}`);
      const modelId = json ? `model_${hex()}` : `${b.session_id}:train:${b.model_seq_id}`;
      if (models.has(modelId))
        throw new WireRefusal(409, `model_seq_id ${b.model_seq_id} was already used in this session`);
      const m: StandInModel = {
        modelId,
        sessionId: b.session_id,
        baseModel: b.base_model,
        loraRank: rank,
        model: new BigramModel(base(b.base_model).vocabSize),
        nextSeq: 1,
        waiting: new Map(),
      };
      models.set(modelId, m);
      session.models++;
      const result = json
        ? {
            model_id: modelId,
            base_model: b.base_model,
            lora_config: b.lora_config,
            status: 'ready',
            type: 'create_model',
          }
        : { model_id: modelId, type: 'create_model' };
      return submit(undefined, undefined, 'json', () => result);
    },
    '/api/v1/get_info': (b) => {
      const m = modelOf(b.model_id);
      const info = base(m.baseModel);
      return json
        ? {
            model_id: m.modelId,
            status: 'ready',
            model_data: { base_model: m.baseModel, lora_config: { rank: m.loraRank }, model_name: m.baseModel },
          }
        : {
            type: 'get_info',
            model_id: m.modelId,
            model_data: { arch: info.arch ?? null, model_name: m.baseModel, tokenizer_id: info.tokenizerId ?? null },
            is_lora: true,
            lora_rank: m.loraRank,
            model_name: m.baseModel,
          };
    },
    '/api/v1/forward_backward': (b) =>
      fwdbwd({ model_id: b.model_id, seq_id: b.seq_id, input: b.forward_backward_input }, Boolean(b.forward_only)),
    '/api/v1/forward': (b) => fwdbwd({ model_id: b.model_id, seq_id: b.seq_id, input: b.forward_input }, true),
    '/api/v1/optim_step': (b) => {
      const m = modelOf(b.model_id);
      const adam = {
        learning_rate: 1e-4,
        beta1: 0.9,
        beta2: 0.95,
        eps: 1e-12,
        weight_decay: 0,
        grad_clip_norm: 0,
        ...b.adam_params,
      };
      if (!(adam.learning_rate >= 0))
        throw new WireRefusal(400, `adam_params.learning_rate must be >= 0; got ${adam.learning_rate}`);
      return submit(m, b.seq_id, 'json', () => {
        const { gradNorm, updated } = m.model.adamStep(adam);
        return { type: 'optim_step', metrics: { 'grad_norm:mean': gradNorm, 'updated_params:sum': updated } };
      });
    },
    '/api/v1/save_weights': (b) => {
      const m = modelOf(b.model_id);
      const path = saveCheckpoint(m, 'weights', b.path ?? `ckpt_${b.seq_id}`, b.overwrite === true);
      return submit(m, b.seq_id, 'json', () => {
        checkpoints.set(path, {
          path,
          kind: 'weights',
          baseModel: m.baseModel,
          loraRank: m.loraRank,
          snapshot: m.model.snapshot(true),
        });
        return { type: 'save_weights', path };
      });
    },
    '/api/v1/save_weights_for_sampler': (b) => {
      const m = modelOf(b.model_id);
      if (b.path == null && b.sampling_session_seq_id == null)
        throw new WireRefusal(400, 'Give path or sampling_session_seq_id');
      const name = b.path ?? `ss${b.sampling_session_seq_id}_seq${b.seq_id}`;
      const path = saveCheckpoint(m, 'sampler_weights', name, false);
      return submit(m, b.seq_id, 'json', () => {
        checkpoints.set(path, {
          path,
          kind: 'sampler_weights',
          baseModel: m.baseModel,
          loraRank: m.loraRank,
          snapshot: m.model.snapshot(false),
        });
        if (b.path != null) return { type: 'save_weights_for_sampler', path };
        return {
          type: 'save_weights_for_sampler',
          path,
          sampling_session_id: openSampler(m.sessionId, { model_path: path }),
        };
      });
    },
    '/api/v1/load_weights': (b) => {
      const m = modelOf(b.model_id);
      const ckpt = checkpoints.get(b.path);
      if (!ckpt || ckpt.kind !== 'weights') {
        throw new WireRefusal(
          400,
          'request.path must be in format tinker://source_model_id/weights/checkpoint_id and name a saved state',
        );
      }
      if (ckpt.baseModel !== m.baseModel)
        throw new WireRefusal(400, `checkpoint ${b.path} was trained on ${ckpt.baseModel}, not ${m.baseModel}`);
      return submit(m, b.seq_id, 'json', () => {
        m.model.restore(ckpt.snapshot, b.optimizer === true);
        return { type: 'load_weights', path: b.path };
      });
    },
    '/api/v1/unload_model': (b) => {
      const m = modelOf(b.model_id);
      return submit(undefined, undefined, 'json', () => {
        models.delete(m.modelId);
        return { type: 'unload_model', model_id: m.modelId };
      });
    },
    '/api/v1/create_sampling_session': (b) => ({
      type: 'create_sampling_session',
      sampling_session_id: openSampler(b.session_id, b),
    }),
    '/api/v1/asample': (b) => {
      if (json && b.sampling_params.max_tokens == null) throw new WireRefusal(400, 'max_tokens is currently required');
      if (b.sampling_params.max_tokens != null && b.sampling_params.max_tokens < 1)
        throw new WireRefusal(400, 'max_tokens must be a positive number');
      const sampler = b.sampling_session_id != null ? samplers.get(b.sampling_session_id) : undefined;
      if (!sampler) throw new WireRefusal(404, `Sampling session '${String(b.sampling_session_id)}' not found`);
      const prompt = modelInputTokens(b.prompt);
      const bad = prompt.find((t) => t < 0 || t >= sampler.model.vocabSize);
      if (prompt.length === 0 || bad !== undefined)
        throw new WireRefusal(
          400,
          prompt.length === 0 ? 'prompt has no tokens' : `prompt token id ${bad} is outside the vocabulary`,
        );
      const rng = b.sampling_params.seed != null ? seededRandom(b.sampling_params.seed) : random;
      return submit(undefined, undefined, 'sample', () => {
        const result = runSample(
          sampler.model,
          prompt,
          b.sampling_params,
          b.num_samples ?? 1,
          b.prompt_logprobs === true,
          rng,
        );
        s.sampled.push({
          modelPath: sampler.modelPath,
          baseModel: sampler.baseModel,
          prompt,
          result: result as StandInSample['result'],
        });
        return result;
      });
    },
    '/api/v1/weights_info': (b) => {
      const ckpt = checkpoints.get(b.tinker_path);
      if (!ckpt) throw new WireRefusal(404, `Checkpoint not found: ${b.tinker_path}`);
      return {
        base_model: ckpt.baseModel,
        is_lora: true,
        lora_rank: ckpt.loraRank,
        train_unembed: true,
        train_mlp: true,
        train_attn: true,
      };
    },
    '/api/v1/telemetry': () => ({ status: 'accepted' }),
  };
  return routes;
}
