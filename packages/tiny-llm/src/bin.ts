#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { DEFAULT_TINY_CONFIG, type TinyConfig } from './model/tiny-config';
import { initWeights } from './model/tiny-weights';
import { WeightStore } from './model/weight-store';
import { startTinyServer } from './server/tiny-server';
import { TinyTokenizer } from './tokenizer/tiny-tokenizer';

const USAGE = `agl-tiny <command> [options]

Commands:
  serve   Serve the embedded policy over an OpenAI-compatible API (prints AGL_TINY_URL=... when ready)
  init    Write fresh random weights as a new version
  bench   Measure generation tokens/s and SFT step time

Options:
  --dir <path>          weights directory (default ./tiny-weights)
  --version <name>      weights version (serve: default latest; init: default v0)
  --port <n>            serve: port (default 4749; 0 = any free port)
  --host <addr>         serve: bind address (default 127.0.0.1)
  --token <t>           serve: require "Authorization: Bearer <t>" (or AGL_TINY_TOKEN)
  --model-name <name>   serve: model id prefix (default agl-tiny)
  --seed <n>            init (and serve, for a new v0): weight seed (default 0)
  --sampling-seed <n>   serve: seed the seeds of requests that send none (reproducible runs)
  --tinker              serve: also answer Tinker's REST API under /api/v1 (prints TINKER_BASE_URL=...); the key is --token
  --prefix-cache-mib <n> serve: memory for the prefix cache of prompts' KV caches (default 32; 0 turns it off)
  --d-model, --layers, --heads, --d-ff, --max-seq-len   model shape for init/bench`;

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      dir: { type: 'string', default: './tiny-weights' },
      version: { type: 'string' },
      port: { type: 'string', default: '4749' },
      host: { type: 'string', default: '127.0.0.1' },
      token: { type: 'string' },
      'model-name': { type: 'string' },
      seed: { type: 'string', default: '0' },
      'sampling-seed': { type: 'string' },
      'prefix-cache-mib': { type: 'string' },
      'd-model': { type: 'string' },
      layers: { type: 'string' },
      heads: { type: 'string' },
      'd-ff': { type: 'string' },
      'max-seq-len': { type: 'string' },
      tinker: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const shape: Partial<Omit<TinyConfig, 'vocabSize'>> = {};
  if (values['d-model']) shape.dModel = Number(values['d-model']);
  if (values.layers) shape.nLayers = Number(values.layers);
  if (values.heads) shape.nHeads = Number(values.heads);
  if (values['d-ff']) shape.dFF = Number(values['d-ff']);
  if (values['max-seq-len']) shape.maxSeqLen = Number(values['max-seq-len']);
  const cmd = positionals[0];
  if (values.help || !cmd) {
    console.log(USAGE);
    return;
  }
  if (cmd === 'serve') {
    const server = await startTinyServer({
      weightsDir: values.dir!,
      version: values.version,
      port: Number(values.port),
      host: values.host,
      token: values.token ?? process.env.AGL_TINY_TOKEN,
      modelName: values['model-name'],
      init: { config: shape, seed: Number(values.seed) },
      samplingSeed: values['sampling-seed'] === undefined ? undefined : Number(values['sampling-seed']),
      prefixCacheMiB: values['prefix-cache-mib'] === undefined ? undefined : Number(values['prefix-cache-mib']),
      tinker: values.tinker === true,
    });
    console.log(`AGL_TINY_URL=${server.url}`);
    if (server.tinkerUrl) {
      console.log(`TINKER_BASE_URL=${server.tinkerUrl}`);
      console.error(
        `agl-tiny: Tinker API at ${server.tinkerUrl}/api/v1 (base model "${server.current.modelId.split('@')[0]}")`,
      );
    }
    console.error(`agl-tiny: serving ${server.current.modelId} (OpenAI base URL ${server.url}/v1)`);
    const stop = () => void server.close().then(() => process.exit(0));
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  } else if (cmd === 'init') {
    const tokenizer = new TinyTokenizer();
    const config = { ...DEFAULT_TINY_CONFIG, ...shape, vocabSize: tokenizer.vocabSize };
    const weights = initWeights({ config, tokenizer: tokenizer.spec, seed: Number(values.seed) });
    const path = await new WeightStore({ dir: values.dir! }).save({
      weights,
      version: values.version ?? 'v0',
      meta: { init: true },
    });
    console.log(path);
  } else if (cmd === 'bench') {
    const { benchmark } = await import('./bench');
    console.log(JSON.stringify(await benchmark({ config: shape }), null, 2));
  } else {
    console.error(`Unknown command "${cmd}".\n\n${USAGE}`);
    process.exit(2);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
