import * as tf from '@tensorflow/tfjs';
import '@tensorflow/tfjs-backend-wasm';

let ready: Promise<typeof tf> | undefined;

/**
 * tfjs with the wasm backend (single-threaded in Node, about 4x the plain CPU backend). Falls back to `cpu` only when
 * `AGL_TINY_TF_BACKEND=cpu` asks for it.
 */
export function loadTf(): Promise<typeof tf> {
  ready ??= (async () => {
    const backend = process.env.AGL_TINY_TF_BACKEND ?? 'wasm';
    await tf.setBackend(backend);
    await tf.ready();
    return tf;
  })();
  return ready;
}

export type Tf = typeof tf;
