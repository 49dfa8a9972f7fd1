import type { Tensor, Tensor2D } from '@tensorflow/tfjs';
import type { Tf } from './tf-backend';
import type { TinyConfig } from '../model/tiny-config';
import { nextSegmentPosition } from '../tokenizer/tiny-tokenizer';

/**
 * The training graph of the transformer (the same maths as `InferenceModel`): one-hot matmul embedding (the gradient
 * of `gather` is missing on wasm), learned positions, pre-RMSNorm blocks with causal multi-head attention and a SiLU
 * MLP, tied output head. `ids` is [B, T] right-padded; returns logits [B*T, V].
 */
export function tfForward(tf: Tf, config: TinyConfig, params: Record<string, Tensor>, ids: number[][]): Tensor2D {
  const { dModel: d, nHeads: H, vocabSize: V } = config;
  const B = ids.length;
  const T = ids[0]!.length;
  const hd = d / H;
  const p = (name: string) => params[name]!;
  const flat = tf.tensor1d(ids.flat(), 'int32');
  const onehot = tf.oneHot(flat, V).toFloat() as Tensor2D;
  let x = tf.matMul(onehot, p('tok_emb') as Tensor2D).reshape([B, T, d]);
  x = tf.add(x, tf.slice(p('pos_emb'), [0, 0], [T, d]));
  // Token shifts: position t also sees the embedding of token t-1 (`prev_emb`) and of token t-2 (`prev2_emb`).
  const shift = (back: number, name: string): void => {
    const prev = ids.flatMap((row) => [...new Array<number>(back).fill(0), ...row.slice(0, T - back)]);
    const keep = new Float32Array(B * T).map((_, i) => (i % T < back ? 0 : 1));
    const shifted = tf.mul(
      tf.oneHot(tf.tensor1d(prev, 'int32'), V).toFloat(),
      tf.tensor2d(keep, [B * T, 1]),
    ) as Tensor2D;
    x = tf.add(x, tf.matMul(shifted, p(name) as Tensor2D).reshape([B, T, d]));
  };
  if (config.prevTokenEmbedding) shift(1, 'prev_emb');
  if (config.prev2TokenEmbedding) shift(2, 'prev2_emb');
  if (config.segmentPositions) {
    // Segment positions: how many tokens since the last special token (the special token itself is at 0).
    const seg = ids.flatMap((row) => {
      let at = -1;
      return row.map((id) => (at = nextSegmentPosition(at, id)));
    });
    const segHot = tf.oneHot(tf.tensor1d(seg, 'int32'), config.maxSeqLen).toFloat() as Tensor2D;
    x = tf.add(x, tf.matMul(segHot, p('seg_emb') as Tensor2D).reshape([B, T, d]));
  }
  const maskData = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) maskData[i * T + j] = -1e9;
  const mask = tf.tensor2d(maskData, [T, T]);
  const rms = (t: Tensor, g: Tensor) => tf.mul(tf.mul(t, tf.rsqrt(tf.add(tf.mean(tf.square(t), -1, true), 1e-5))), g);
  const heads = (t: Tensor) => tf.transpose(tf.reshape(t, [B, T, H, hd]), [0, 2, 1, 3]);
  for (let l = 0; l < config.nLayers; l++) {
    const h = tf.reshape(rms(x, p(`l${l}.norm1`)), [B * T, d]) as Tensor2D;
    const qkv = tf.matMul(h, p(`l${l}.wqkv`) as Tensor2D);
    const [q, k, v] = tf.split(qkv, 3, 1) as [Tensor, Tensor, Tensor];
    const scores = tf.add(tf.mul(tf.matMul(heads(q), heads(k), false, true), 1 / Math.sqrt(hd)), mask);
    const att = tf.matMul(tf.softmax(scores, -1), heads(v));
    const merged = tf.reshape(tf.transpose(att, [0, 2, 1, 3]), [B * T, d]) as Tensor2D;
    x = tf.add(x, tf.reshape(tf.matMul(merged, p(`l${l}.wo`) as Tensor2D), [B, T, d]));
    const h2 = tf.reshape(rms(x, p(`l${l}.norm2`)), [B * T, d]) as Tensor2D;
    const z = tf.matMul(h2, p(`l${l}.w1`) as Tensor2D);
    const f = tf.mul(z, tf.sigmoid(z)) as Tensor2D;
    x = tf.add(x, tf.reshape(tf.matMul(f, p(`l${l}.w2`) as Tensor2D), [B, T, d]));
  }
  const hf = tf.reshape(rms(x, p('norm_f')), [B * T, d]) as Tensor2D;
  return tf.matMul(hf, p('tok_emb') as Tensor2D, false, true);
}

/** Per-position log-probability of `targets` [B*T] under `logits` [B*T, V]; one-hot product, no gather. */
export function tokenLogprobs(
  tf: Tf,
  logits: Tensor2D,
  targets: number[],
  vocabSize: number,
): { logp: Tensor; logpAll: Tensor2D } {
  const logpAll = tf.logSoftmax(logits, -1) as Tensor2D;
  const onehot = tf.oneHot(tf.tensor1d(targets, 'int32'), vocabSize).toFloat();
  return { logp: tf.sum(tf.mul(logpAll, onehot), -1), logpAll };
}
