import type { IncomingMessage, ServerResponse } from 'node:http';
import { NotFoundError } from '@agl/core/errors';
import { sendJson } from '../server/http-util';
import type { ForwardBackwardResult } from '../train/primitive-steps';
import {
  decodeForwardBackward,
  encodeForwardBackwardOutput,
  encodeSampleResponse,
  PROTO_CONTENT_TYPE,
  type SampleResult,
} from './tinker-proto';
import { sampleFromTinker } from './tinker-sample';
import type { TinkerService } from './tinker-service';
import { tokenizerAnswer } from './tinker-tokenizer';
import { asObject, badField, f32Tensor, optInt, str } from './tinker-wire';

/** The SDK version this server's wire follows. */
export const TINKER_SDK_VERSION = '0.25.0';

async function readBody(req: IncomingMessage, limit = 64 * 1024 * 1024): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw badField('body', `is larger than ${limit} bytes; send smaller chunks (≤ 1024 datums).`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

function parseJson(buf: Buffer): Record<string, unknown> {
  if (buf.length === 0) return {};
  try {
    return asObject(JSON.parse(buf.toString('utf8')) as unknown);
  } catch (err) {
    if (err instanceof SyntaxError)
      throw badField('body', 'is not valid JSON; send a JSON object with Content-Type: application/json.');
    throw err;
  }
}

function num(body: Record<string, unknown>, key: string, dflt: number, where: string): number {
  const v = body[key];
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw badField(`${where}${key}`, `must be a number, got ${JSON.stringify(v)}.`);
  return v;
}

/** JSON `ForwardBackwardOutput` of a trainer result. */
function fwdBwdJson(r: ForwardBackwardResult): Record<string, unknown> {
  return {
    loss_fn_output_type: 'ArrayRecord',
    loss_fn_outputs: r.outputs.map((o) => ({
      logprobs: f32Tensor(o.logprobs),
      elementwise_loss: f32Tensor(o.elementwiseLoss),
    })),
    metrics: r.metrics,
  };
}

/**
 * Handles `/api/v1/*`: Tinker's REST API as the official SDK (0.25) speaks it, over the embedded policy. Answers JSON,
 * reads protobuf `forward_backward` bodies, and answers sample / forward_backward futures in protobuf when the poll
 * sends `Accept: application/x-protobuf`.
 */
export async function handleTinker(
  svc: TinkerService,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<void> {
  const method = req.method ?? 'GET';
  const route = `${method} ${path.slice('/api/v1'.length)}`;
  if (req.headers['content-encoding'] && req.headers['content-encoding'] !== 'identity') {
    sendJson(res, 415, {
      detail: `Content-Encoding "${String(req.headers['content-encoding'])}" is not supported; this server's client config says proto_compress_fwdbwd: false, so send uncompressed bodies.`,
      error_type: 'AGL_ValidationError',
    });
    return;
  }
  const raw = method === 'POST' ? await readBody(req) : Buffer.alloc(0);
  const isProto = String(req.headers['content-type'] ?? '').includes(PROTO_CONTENT_TYPE);
  const body = isProto ? {} : parseJson(raw);
  const future = (
    kind: Parameters<TinkerService['futures']['submit']>[0],
    run: () => Promise<unknown>,
    modelId?: string,
  ) => sendJson(res, 200, { request_id: svc.futures.submit(kind, run), ...(modelId ? { model_id: modelId } : {}) });
  const seq = (): number | undefined => optInt(body, 'seq_id');
  switch (route) {
    case 'POST /client/config':
      return sendJson(res, 200, {
        pjwt_auth_enabled: false,
        credential_default_source: 'api_key',
        parallel_fwdbwd_chunks: false,
        proto_compress_fwdbwd: false,
        fwdbwd_max_chunk_len: 1024,
        use_pyqwest_transport: false,
        create_model_via_load_weights: false,
      });
    case 'POST /client/dynamic_config':
      return sendJson(res, 200, { refresh_interval_sec: 300 });
    case 'GET /healthz':
      return sendJson(res, 200, { status: 'ok' });
    case 'GET /get_server_capabilities':
      return sendJson(res, 200, {
        supported_models: (await svc.baseModels()).map((model_name) => ({
          model_name,
          max_context_length: svc.host.current.config.maxSeqLen,
        })),
      });
    case 'POST /create_session':
      return sendJson(res, 200, { type: 'create_session', session_id: svc.createSession() });
    case 'POST /session_heartbeat':
      svc.heartbeat(str(body, 'session_id'));
      return sendJson(res, 200, { type: 'session_heartbeat' });
    case 'POST /telemetry':
      return sendJson(res, 200, { status: 'accepted' });
    case 'POST /create_model': {
      const sessionId = str(body, 'session_id');
      const baseModel = str(body, 'base_model');
      const lora = body.lora_config === undefined ? {} : asObject(body.lora_config, 'lora_config');
      const rank = optInt(lora, 'rank', 'lora_config.') ?? 32;
      const modelSeqId = optInt(body, 'model_seq_id');
      svc.heartbeat(sessionId);
      await svc.baseVersion(baseModel);
      return future('CreateModel', async () => ({
        type: 'create_model',
        model_id: await svc.createModel({ sessionId, modelSeqId, baseModel, loraRank: rank }),
      }));
    }
    case 'POST /get_info':
      return sendJson(res, 200, svc.info(str(body, 'model_id')));
    case 'POST /forward_backward':
    case 'POST /forward': {
      const b = isProto ? (decodeForwardBackward(raw) as unknown as Record<string, unknown>) : body;
      const forwardOnly = route === 'POST /forward' || b.forward_only === true;
      const inputKey = route === 'POST /forward' ? 'forward_input' : 'forward_backward_input';
      const input = asObject(b[inputKey], inputKey);
      if (!Array.isArray(input.data)) throw badField(`${inputKey}.data`, 'is required, a list of datums.');
      const modelId = str(b, 'model_id');
      svc.model(modelId);
      const seqId = isProto ? (b.seq_id as number) || undefined : optInt(b, 'seq_id');
      const lossFn = str(input, 'loss_fn', `${inputKey}.`);
      const cfg =
        input.loss_fn_config === undefined || input.loss_fn_config === null
          ? undefined
          : asObject(input.loss_fn_config, `${inputKey}.loss_fn_config`);
      const run = svc.forwardBackward({
        modelId,
        seqId,
        data: input.data as unknown[],
        lossFn,
        lossFnConfig: cfg as Record<string, number> | undefined,
        forwardOnly,
      });
      return future(forwardOnly ? 'Forward' : 'ForwardBackward', async () => fwdBwdJson(await run));
    }
    case 'POST /optim_step': {
      const modelId = str(body, 'model_id');
      svc.model(modelId);
      const a = body.adam_params === undefined ? {} : asObject(body.adam_params, 'adam_params');
      const w = 'adam_params.';
      const params = {
        learningRate: num(a, 'learning_rate', 1e-4, w),
        beta1: num(a, 'beta1', 0.9, w),
        beta2: num(a, 'beta2', 0.95, w),
        eps: num(a, 'eps', 1e-12, w),
        weightDecay: num(a, 'weight_decay', 0, w),
        gradClipNorm: num(a, 'grad_clip_norm', 0, w),
      };
      const run = svc.optimStep(modelId, seq(), params);
      return future('OptimStep', async () => ({ type: 'optim_step', metrics: await run }));
    }
    case 'POST /save_weights': {
      const modelId = str(body, 'model_id');
      svc.model(modelId);
      const run = svc.saveWeights(modelId, seq(), str(body, 'path'));
      return future('SaveWeights', async () => ({ type: 'save_weights', path: await run }));
    }
    case 'POST /save_weights_for_sampler': {
      const modelId = str(body, 'model_id');
      svc.model(modelId);
      const name = typeof body.path === 'string' ? body.path : undefined;
      const ssSeq = optInt(body, 'sampling_session_seq_id');
      if (name === undefined && ssSeq === undefined)
        throw badField('path', 'is required (or sampling_session_seq_id for an unnamed sampler save).');
      const run = svc.saveForSampler({ modelId, seqId: seq(), name, samplingSessionSeqId: ssSeq });
      return future('SaveWeightsForSampler', async () => ({ type: 'save_weights_for_sampler', ...(await run) }));
    }
    case 'POST /load_weights': {
      const modelId = str(body, 'model_id');
      svc.model(modelId);
      const p = str(body, 'path');
      const run = svc.loadWeights(modelId, seq(), p, body.optimizer === true);
      return future('LoadWeights', async () => {
        await run;
        return { type: 'load_weights', path: p, model_id: modelId };
      });
    }
    case 'POST /unload_model': {
      const modelId = str(body, 'model_id');
      svc.model(modelId);
      return future('UnloadModel', async () => {
        await svc.unloadModel(modelId);
        return { type: 'unload_model', model_id: modelId };
      });
    }
    case 'POST /create_sampling_session': {
      const id = await svc.createSamplingSession({
        sessionId: str(body, 'session_id'),
        seq: optInt(body, 'sampling_session_seq_id'),
        modelPath: typeof body.model_path === 'string' ? body.model_path : undefined,
        baseModel: typeof body.base_model === 'string' ? body.base_model : undefined,
      });
      return sendJson(res, 200, { type: 'create_sampling_session', sampling_session_id: id });
    }
    case 'POST /asample': {
      const served = await svc.servedForSample({
        samplingSessionId: typeof body.sampling_session_id === 'string' ? body.sampling_session_id : undefined,
        modelPath: typeof body.model_path === 'string' ? body.model_path : undefined,
        baseModel: typeof body.base_model === 'string' ? body.base_model : undefined,
      });
      const run = sampleFromTinker(svc.host, served, body);
      run.catch(() => undefined);
      return future('Sample', () => run);
    }
    case 'POST /retrieve_future': {
      const id = str(body, 'request_id');
      const ac = new AbortController();
      res.on('close', () => ac.abort());
      const out = await svc.futures.retrieve(id, ac.signal);
      if (!out)
        throw new NotFoundError('future', id, `No future "${id}"; request ids come from the call that started it.`);
      if (out.status === 'pending')
        return sendJson(res, 200, { type: 'try_again', request_id: id, queue_state: 'active' });
      if (out.status === 'failed') return sendJson(res, 200, { error: out.error, category: out.category });
      const wantsProto = String(req.headers.accept ?? '').includes(PROTO_CONTENT_TYPE);
      if (wantsProto && (out.kind === 'Sample' || out.kind === 'ForwardBackward' || out.kind === 'Forward')) {
        const bytes =
          out.kind === 'Sample'
            ? encodeSampleResponse(out.value as SampleResult)
            : encodeForwardBackwardOutput({
                outputs: (
                  out.value as { loss_fn_outputs: Array<Record<string, { data: number[] }>> }
                ).loss_fn_outputs.map((o) => Object.fromEntries(Object.entries(o).map(([k, t]) => [k, t.data]))),
                metrics: (out.value as { metrics: Record<string, number> }).metrics,
              });
        res.writeHead(200, { 'content-type': PROTO_CONTENT_TYPE, 'content-length': bytes.length });
        res.end(bytes);
        return;
      }
      return sendJson(res, 200, out.value);
    }
    case 'POST /weights_info':
      return sendJson(res, 200, await svc.weightsInfo(str(body, 'tinker_path')));
    case 'GET /tokenizer': {
      const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
      return sendJson(res, 200, await tokenizerAnswer(query, svc.tokenizers, (m) => svc.tokenizerOf(m)));
    }
    default:
      break;
  }
  const sampler = /^GET \/samplers\/(.+)$/.exec(route);
  if (sampler) {
    const s = svc.sampler(decodeURIComponent(sampler[1]!));
    return sendJson(res, 200, { sampler_id: s.id, base_model: s.baseModel, model_path: s.modelPath });
  }
  const ckpts = /^GET \/training_runs\/(.+)\/checkpoints$/.exec(route);
  if (ckpts) return sendJson(res, 200, { checkpoints: await svc.checkpoints(decodeURIComponent(ckpts[1]!)) });
  throw new NotFoundError(
    'route',
    route,
    `No Tinker route ${method} ${path}; this server follows the Tinker SDK ${TINKER_SDK_VERSION}.`,
  );
}
