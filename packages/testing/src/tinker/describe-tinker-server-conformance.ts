import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ValidationError } from '@agl/core/errors';
import {
  ServiceClient,
  TinkerApiError,
  modelInputFromTokens,
  type Datum,
  type LossFnType,
  type ServiceClientOptions,
} from '@agl/tinker';

/** A Tinker-compatible server under test. */
export interface TinkerServerUnderTest {
  /** The server's base URL (what TINKER_BASE_URL would be). */
  baseUrl: string;
  /** The key it takes, if any. */
  apiKey?: string;
  /** A base model it serves whose vocabulary holds token ids 0..199. */
  baseModel: string;
  close(): Promise<void>;
}

/** Options of {@link describeTinkerServerConformance}. */
export interface TinkerServerConformanceOptions {
  /** The policy-gradient losses the server implements. Default: importance_sampling, ppo, cispo. */
  losses?: LossFnType[];
  /**
   * Adam learning rate of the case that checks optim_step lowers the loss. Default 0.1 (a LoRA or bigram model); a
   * server that trains full weights (the embedded policy) needs a smaller one, e.g. 0.01.
   */
  learningRate?: number;
  /** Extra client options (e.g. `forwardBackwardWire: 'json'`). */
  client?: Partial<ServiceClientOptions>;
}

/** A cross-entropy datum teaching `completion` after `prompt`: prompt positions weigh 0. */
function sftDatum(prompt: number[], completion: number[]): Datum {
  const tokens = [...prompt, ...completion];
  return {
    model_input: modelInputFromTokens(tokens.slice(0, -1)),
    loss_fn_inputs: {
      target_tokens: tokens.slice(1),
      weights: tokens.slice(1).map((_, i) => (i + 1 < prompt.length ? 0 : 1)),
    },
  };
}

function close(a: readonly number[], b: readonly (number | null)[], tolerance = 1e-3) {
  expect(a.length).toBe(b.length);
  a.forEach((v, i) => expect(Math.abs(v - (b[i] ?? Number.NaN))).toBeLessThan(tolerance));
}

/**
 * Registers a conformance suite for a server of the Tinker API, run through `@agl/tinker`'s client: session and
 * heartbeat, create_model / get_info, forward and forward_backward with real losses, optim_step lowering the loss,
 * save_weights_for_sampler and sampling from the saved weights (the sampler's prompt logprobs equal the trainer's),
 * save_weights / load_weights resuming the same state, sampling from the base model, and refusals. It checks only
 * what any correct server must do, so hosted Tinker, a self-hosted server or the tiny policy can run it.
 *
 * @example
 * describeTinkerServerConformance('stand-in', async () => {
 *   const server = await startTinkerStandIn();
 *   return { baseUrl: server.url, baseModel: 'Qwen/Qwen3-8B', close: () => server.close() };
 * });
 */
export function describeTinkerServerConformance(
  name: string,
  factory: () => Promise<TinkerServerUnderTest>,
  options: TinkerServerConformanceOptions = {},
): void {
  describe(`${name} conforms to the Tinker API`, () => {
    let server: TinkerServerUnderTest;
    let service: ServiceClient;
    const datum = sftDatum([11, 12, 13], [21, 22, 23, 24]);

    beforeAll(async () => {
      server = await factory();
      service = new ServiceClient({
        baseUrl: server.baseUrl,
        apiKey: server.apiKey ?? 'tml-conformance',
        ...options.client,
      });
    });
    afterAll(async () => {
      await service?.close();
      await server?.close();
    });

    it('opens a session and takes heartbeats', async () => {
      expect(await service.start()).toMatch(/\S/);
      await service.heartbeat();
    });

    it('creates a LoRA model and describes it', async () => {
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      expect(training.modelId).toMatch(/\S/);
      const info = await training.getInfo();
      expect(info.model_id).toBe(training.modelId);
    });

    it('computes per-token logprobs and a cross-entropy loss that agree; forward changes nothing', async () => {
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      const first = await training.forward([datum], 'cross_entropy');
      const logprobs = first.loss_fn_outputs[0]!.logprobs!.data;
      expect(logprobs).toHaveLength(6);
      for (const lp of logprobs) expect(lp).toBeLessThan(0);
      const weights = datum.loss_fn_inputs.weights as number[];
      const expected = -logprobs.reduce((sum, lp, i) => sum + lp * weights[i]!, 0);
      expect(first.metrics['loss:sum']).toBeCloseTo(expected, 3);
      const again = await training.forward([datum], 'cross_entropy');
      close(again.loss_fn_outputs[0]!.logprobs!.data, logprobs, 1e-5);
    });

    it('lowers the loss with forward_backward + optim_step', async () => {
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      const losses: number[] = [];
      for (let step = 0; step < 4; step++) {
        const out = await training.forwardBackward([datum], 'cross_entropy');
        losses.push(out.metrics['loss:sum']!);
        await training.optimStep({ learningRate: options.learningRate ?? 0.1 });
      }
      expect(losses[3]!).toBeLessThan(losses[0]! - 0.1);
    });

    it('samples from saved sampler weights with the logprobs the trainer computes', async () => {
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      for (let step = 0; step < 3; step++) {
        await training.forwardBackward([datum], 'cross_entropy');
        await training.optimStep({ learningRate: 0.2 });
      }
      const { path } = await training.saveWeightsForSampler('conformance-000003');
      expect(path).toMatch(/^tinker:\/\/.+\/sampler_weights\/conformance-000003$/);
      const sampler = await service.createSamplingClient({ modelPath: path });
      const sampled = await sampler.sample([11, 12, 13], { maxTokens: 4, numSamples: 2, temperature: 1 });
      expect(sampled.sequences).toHaveLength(2);
      for (const seq of sampled.sequences) {
        expect(seq.tokens.length).toBeGreaterThan(0);
        expect(seq.tokens.length).toBeLessThanOrEqual(4);
        expect(seq.logprobs).toHaveLength(seq.tokens.length);
      }
      const tokens = [11, 12, 13, 21, 22, 23, 24];
      const promptLogprobs = await sampler.computeLogprobs(tokens);
      expect(promptLogprobs[0]).toBeNull();
      const trainer = await training.forward([datum], 'cross_entropy');
      close(trainer.loss_fn_outputs[0]!.logprobs!.data, promptLogprobs.slice(1));
    });

    it('resumes a saved training state in a new model', async () => {
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      await training.forwardBackward([datum], 'cross_entropy');
      await training.optimStep({ learningRate: 0.3 });
      const { path } = await training.saveWeights('conformance-state');
      expect(path).toMatch(/^tinker:\/\/.+\/weights\/conformance-state$/);
      const before = await training.forward([datum], 'cross_entropy');
      const resumed = await service.createTrainingClientFromState(path, { withOptimizer: true });
      expect(resumed.modelId).not.toBe(training.modelId);
      const after = await resumed.forward([datum], 'cross_entropy');
      close(after.loss_fn_outputs[0]!.logprobs!.data, before.loss_fn_outputs[0]!.logprobs!.data, 1e-5);
    });

    it('trains with the policy-gradient losses', async () => {
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      const tokens = [11, 12, 13, 21, 22];
      const rl: Datum = {
        model_input: modelInputFromTokens(tokens.slice(0, -1)),
        loss_fn_inputs: { target_tokens: tokens.slice(1), logprobs: [-5, -5, -5, -5], advantages: [0, 0, 1, 1] },
      };
      for (const loss of options.losses ?? (['importance_sampling', 'ppo', 'cispo'] as LossFnType[])) {
        const out = await training.forwardBackward([rl], loss);
        expect(out.loss_fn_outputs[0]!.logprobs!.data, loss).toHaveLength(4);
        expect(Number.isFinite(out.metrics['loss:sum']), loss).toBe(true);
      }
      await training.optimStep({ learningRate: 0.01 });
    });

    it('samples from a base model', async () => {
      const sampler = await service.createSamplingClient({ baseModel: server.baseModel });
      const out = await sampler.sample([1, 2, 3], { maxTokens: 3 });
      expect(out.sequences[0]!.tokens.length).toBeGreaterThan(0);
    });

    it('refuses bad input: an unknown base model (the service) and a datum missing its loss inputs (the client)', async () => {
      const refused = await service
        .createLoraTrainingClient({ baseModel: 'no-such/model-xyz' })
        .catch((e: unknown) => e);
      expect(TinkerApiError.isInstance(refused) && refused.status >= 400 && refused.status < 500).toBe(true);
      expect((refused as Error).message).toContain('create_model');
      const training = await service.createLoraTrainingClient({ baseModel: server.baseModel, rank: 8 });
      const missing = { model_input: modelInputFromTokens([1, 2]), loss_fn_inputs: { target_tokens: [2, 3] } };
      const error = await training.forwardBackward([missing], 'importance_sampling').catch((e: unknown) => e);
      expect(ValidationError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/importance_sampling needs "logprobs"/);
    });
  });
}
