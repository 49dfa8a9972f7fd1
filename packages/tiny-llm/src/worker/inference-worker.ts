import { parentPort, workerData } from 'node:worker_threads';
import { InferenceModel } from '../model/inference-model';
import { PrefixCache } from '../model/prefix-cache';
import { logSoftmax } from '../model/sampler';
import { Sequence } from '../model/sequence';
import type { InferenceEvent, InferenceRequest } from './protocol';

/** Generation scheduler: prefill one new request per tick, then one batched decode step for every active sequence. */
const port = parentPort!;
const models = new Map<string, InferenceModel>();
interface Job {
  id: number;
  /** Resolved when the request arrives, so a later unload cannot pull the weights from under it. */
  model: InferenceModel;
  params: InferenceRequest & { type: 'generate' };
}
const pending: Job[] = [];
const active: Array<{ id: number; index: number; seq: Sequence }> = [];
const cancelled = new Set<number>();
const prefixes = new PrefixCache((workerData as { prefixCacheBytes?: number } | null)?.prefixCacheBytes);
let scheduled = false;

function send(e: InferenceEvent): void {
  port.postMessage(e);
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(tick);
}

function prefill(job: Job): void {
  const { id, params } = job.params;
  const model = job.model;
  try {
    const first = new Sequence(model, params);
    const cachedTokens = prefixes.restore(model, first.cache, params.promptIds);
    const logits = model.prefill(first.cache, params.promptIds.slice(cachedTokens));
    prefixes.remember(model, params.promptIds, first.cache);
    send({ type: 'prefilled', id, cachedTokens });
    for (let i = 0; i < job.params.n; i++) {
      const seq =
        i === 0 ? first : new Sequence(model, { ...params, seed: params.seed + i }, first.cache.clone(model.config));
      seq.logits = logits.slice();
      active.push({ id, index: i, seq });
    }
  } catch (err) {
    send({ type: 'error', id, message: err instanceof Error ? err.message : String(err) });
  }
}

function tick(): void {
  scheduled = false;
  const job = pending.shift();
  if (job && !cancelled.has(job.id)) prefill(job);
  const groups = new Map<InferenceModel, Array<{ entry: (typeof active)[number]; token: number }>>();
  for (let i = active.length - 1; i >= 0; i--) {
    const entry = active[i]!;
    if (cancelled.has(entry.id)) {
      active.splice(i, 1);
      continue;
    }
    const tok = entry.seq.choose();
    if (tok) send({ type: 'tokens', id: entry.id, index: entry.index, tokens: [tok] });
    if (entry.seq.finishReason || !tok) {
      // The cache holds the prompt and every chosen token but the last: an agent's next prompt usually starts so.
      const { seq } = entry;
      prefixes.remember(seq.model, [...seq.params.promptIds, ...seq.output.slice(0, -1).map((t) => t.id)], seq.cache);
      send({ type: 'done', id: entry.id, index: entry.index, finishReason: entry.seq.finishReason ?? 'stop' });
      active.splice(i, 1);
      continue;
    }
    const g = groups.get(entry.seq.model) ?? [];
    g.push({ entry, token: tok.id });
    groups.set(entry.seq.model, g);
  }
  for (const [model, rows] of groups) {
    try {
      const logits = model.forward(rows.map((r) => ({ cache: r.entry.seq.cache, token: r.token, wantLogits: true })));
      rows.forEach((r, i) => (r.entry.seq.logits = logits[i]));
    } catch (err) {
      for (const r of rows) {
        send({ type: 'error', id: r.entry.id, message: err instanceof Error ? err.message : String(err) });
        cancelled.add(r.entry.id);
      }
    }
  }
  if (cancelled.size > 0 && active.length === 0 && pending.length === 0) cancelled.clear();
  if (active.length > 0 || pending.length > 0) schedule();
}

port.on('message', (msg: InferenceRequest) => {
  switch (msg.type) {
    case 'load':
      models.set(msg.version, new InferenceModel(msg.weights));
      send({ type: 'loaded', version: msg.version });
      break;
    case 'unload': {
      const model = models.get(msg.version);
      models.delete(msg.version);
      if (model) prefixes.forget(model);
      break;
    }
    case 'generate': {
      const model = models.get(msg.version);
      if (!model)
        send({ type: 'error', id: msg.id, message: `Weights version "${msg.version}" is not loaded in the worker.` });
      else {
        pending.push({ id: msg.id, model, params: msg });
        schedule();
      }
      break;
    }
    case 'cancel':
      cancelled.add(msg.id);
      schedule();
      break;
    case 'score': {
      try {
        const model = models.get(msg.version);
        if (!model) throw new Error(`Weights version "${msg.version}" is not loaded in the worker.`);
        const cache = model.newCache();
        const logits = model.forward(msg.ids.map((token) => ({ cache, token, wantLogits: true })));
        const logprobs: Array<number | null> = msg.ids.map((id, i) =>
          i === 0 ? null : logSoftmax(logits[i - 1]!)[id]!,
        );
        send({ type: 'scored', id: msg.id, logprobs });
      } catch (err) {
        send({ type: 'error', id: msg.id, message: err instanceof Error ? err.message : String(err) });
      }
      break;
    }
  }
});
