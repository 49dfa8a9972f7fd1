import { parentPort } from 'node:worker_threads';
import { WeightStore } from '../model/weight-store';
import { saveCheckpoint } from '../train/checkpoint';
import { TrainerCore } from '../train/trainer-core';

/** Runs a TrainerCore (tfjs, wasm) off the main thread; methods arrive as `{id, method, args}`. */
const port = parentPort!;
let core: TrainerCore | undefined;

type Handler = (args: never) => unknown;
const handlers: Record<string, Handler> = {
  init: (async (a: Parameters<typeof TrainerCore.create>[0]) => {
    core?.dispose();
    core = await TrainerCore.create(a);
    return { config: core.config, backend: core.tf.getBackend() };
  }) as Handler,
  sftStep: ((rows: Parameters<TrainerCore['sftStep']>[0]) => need().sftStep(rows)) as Handler,
  sft: ((a: Parameters<TrainerCore['sft']>[0]) => need().sft(a)) as Handler,
  sftRows: ((a: Parameters<TrainerCore['sftRows']>[0]) => need().sftRows(a)) as Handler,
  sftLoss: ((rows: Parameters<TrainerCore['sftLoss']>[0]) => need().sftLoss(rows)) as Handler,
  sftAccuracy: ((rows: Parameters<TrainerCore['sftAccuracy']>[0]) => need().sftAccuracy(rows)) as Handler,
  policyStep: ((a: Parameters<TrainerCore['policyStep']>[0]) => need().policyStep(a)) as Handler,
  responseLogprobs: ((a: Parameters<TrainerCore['responseLogprobs']>[0]) => need().responseLogprobs(a)) as Handler,
  forwardBackward: ((a: Parameters<TrainerCore['forwardBackward']>[0]) => need().forwardBackward(a)) as Handler,
  optimStep: ((a: Parameters<TrainerCore['optimStep']>[0]) => need().optimStep(a)) as Handler,
  weights: (() => need().weights()) as Handler,
  setWeights: ((w: Parameters<TrainerCore['setWeights']>[0]) => need().setWeights(w)) as Handler,
  setReference: ((w: Parameters<TrainerCore['setReference']>[0]) => need().setReference(w)) as Handler,
  steps: (() => need().steps) as Handler,
  saveCheckpoint: (async (a: { path: string; meta?: Record<string, unknown> }) =>
    saveCheckpoint({ path: a.path, state: await need().exportState({ ...a.meta, steps: need().steps }) })) as Handler,
  save: (async (a: { dir: string; version: string; meta?: Record<string, unknown>; overwrite?: boolean }) =>
    new WeightStore({ dir: a.dir }).save({
      weights: need().weights(),
      version: a.version,
      meta: a.meta,
      overwrite: a.overwrite,
    })) as Handler,
};

function need(): TrainerCore {
  if (!core) throw new Error('The trainer worker has no model; call init first.');
  return core;
}

port.on('message', (msg: { id: number; method: string; args: unknown }) => {
  void (async () => {
    try {
      const h = handlers[msg.method];
      if (!h) throw new Error(`Unknown trainer method "${msg.method}".`);
      const result = await h(msg.args as never);
      port.postMessage({ id: msg.id, result });
    } catch (err) {
      const e = err as { name?: string; message?: string };
      port.postMessage({ id: msg.id, error: { name: e?.name ?? 'Error', message: e?.message ?? String(err) } });
    }
  })();
});
