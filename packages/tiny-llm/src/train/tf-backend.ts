import type * as TfNamespace from '@tensorflow/tfjs';

/** The tfjs namespace type. */
export type Tf = typeof TfNamespace;

let ready: Promise<Tf> | undefined;

/**
 * Loads tfjs with the wasm backend (single-threaded in Node, about 4x the plain CPU backend) on first use, so importing
 * this package does not load tfjs. `AGL_TINY_TF_BACKEND=cpu` selects the plain CPU backend instead.
 */
export function loadTf(): Promise<Tf> {
  ready ??= (async () => {
    const tf = await import('@tensorflow/tfjs');
    await import('@tensorflow/tfjs-backend-wasm');
    const backend = process.env.AGL_TINY_TF_BACKEND ?? 'wasm';
    const ok = await tf.setBackend(backend);
    await tf.ready();
    if (!ok || tf.getBackend() !== backend) {
      throw new Error(
        `tfjs could not start the "${backend}" backend (got "${tf.getBackend()}"); check @tensorflow/tfjs-backend-wasm is installed.`,
      );
    }
    return tf;
  })();
  return ready;
}
