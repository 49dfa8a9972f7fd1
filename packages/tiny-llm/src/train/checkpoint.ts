import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { UserError } from '@agl/core/errors';
import type { TinyWeights } from '../model/tiny-weights';
import { decodeWeights, encodeWeights } from '../model/weight-store';

/** One optimiser tensor (Adam's step counter and moments), in the trainer's parameter order. */
export interface OptimizerTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

/** Everything needed to resume training exactly: weights and Adam's state. */
export interface TrainerState {
  weights: TinyWeights;
  optimizer: OptimizerTensor[];
  /** Free-form caller data (round number, best reward, …). */
  meta: Record<string, unknown>;
}

const MAGIC = 'AGLCKPT1';

/** Writes a training checkpoint atomically (write, then rename). */
export async function saveCheckpoint(options: { path: string; state: TrainerState }): Promise<void> {
  const { state } = options;
  const weights = encodeWeights(state.weights, 'checkpoint', state.meta);
  let offset = 0;
  const tensors = state.optimizer.map((t) => {
    const e = { name: t.name, shape: t.shape, offset, length: t.data.length };
    offset += t.data.length;
    return e;
  });
  const header = Buffer.from(JSON.stringify({ tensors }), 'utf8');
  const out = Buffer.alloc(8 + 4 + weights.length + 4 + header.length + offset * 4);
  out.write(MAGIC, 0, 'latin1');
  out.writeUInt32LE(weights.length, 8);
  weights.copy(out, 12);
  let p = 12 + weights.length;
  out.writeUInt32LE(header.length, p);
  header.copy(out, p + 4);
  p += 4 + header.length;
  for (const t of state.optimizer) {
    Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength).copy(out, p);
    p += t.data.byteLength;
  }
  await mkdir(dirname(options.path), { recursive: true });
  const tmp = `${options.path}.${process.pid}.tmp`;
  await writeFile(tmp, out);
  await rename(tmp, options.path);
}

/** Reads a checkpoint written by {@link saveCheckpoint}. */
export async function loadCheckpoint(path: string): Promise<TrainerState> {
  let buf: Buffer;
  try {
    buf = await readFile(path);
  } catch {
    throw new UserError(`Checkpoint ${path} does not exist; write one with saveCheckpoint() first.`);
  }
  if (buf.toString('latin1', 0, 8) !== MAGIC)
    throw new UserError(`${path} is not an AGL tiny-llm checkpoint (bad magic).`);
  const wlen = buf.readUInt32LE(8);
  const { weights, meta } = decodeWeights(buf.subarray(12, 12 + wlen), path);
  let p = 12 + wlen;
  const hlen = buf.readUInt32LE(p);
  const { tensors } = JSON.parse(buf.toString('utf8', p + 4, p + 4 + hlen)) as {
    tensors: Array<{ name: string; shape: number[]; offset: number; length: number }>;
  };
  p += 4 + hlen;
  const optimizer = tensors.map((t) => {
    const data = new Float32Array(t.length);
    Buffer.from(data.buffer).set(buf.subarray(p + t.offset * 4, p + (t.offset + t.length) * 4));
    return { name: t.name, shape: t.shape, data };
  });
  return { weights, optimizer, meta };
}
