import { Command, InvalidArgumentError } from 'commander';
import { UserError } from '@agl/core/errors';
import type * as TinyLlm from '@agl/tiny-llm';
import { processIo, type CliIo } from './output';
import { serveUntilSignal } from './serve-until-signal';

/** Flags of `agl tiny serve` (the same as `agl-tiny serve`). */
export interface TinyServeFlags {
  dir: string;
  version?: string;
  host: string;
  port: number;
  token?: string;
  modelName?: string;
  seed: number;
  samplingSeed?: number;
  prefixCacheMib?: number;
  tinker?: boolean;
  dModel?: number;
  layers?: number;
  heads?: number;
  dFf?: number;
  maxSeqLen?: number;
}

/** `@agl/tiny-llm`'s module, as the lazy import gives it. */
export type TinyLlmModule = typeof TinyLlm;

/**
 * Imports `@agl/tiny-llm` on first use: an optional peer of `@agl/cli` (it brings tfjs and its wasm backend, which
 * other commands never need). Throws `UserError` naming the install command when it is not installed.
 */
export async function loadTinyLlm(
  importer: () => Promise<TinyLlmModule> = () => import('@agl/tiny-llm'),
): Promise<TinyLlmModule> {
  try {
    return await importer();
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND')
      throw new UserError(
        'agl tiny needs the embedded policy package @agl/tiny-llm, which is not installed: run `npm install @agl/tiny-llm` beside @agl/cli.',
        { cause: error },
      );
    throw error;
  }
}

function integer(min: number, what: string): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min) throw new InvalidArgumentError(`use ${what} (an integer ≥ ${min}).`);
    return n;
  };
}

/**
 * Serves the embedded policy until SIGINT/SIGTERM: OpenAI-compatible `/v1` routes and, with `--tinker`, Tinker's REST
 * API under `/api/v1`. Prints `AGL_TINY_URL=…` (and `TINKER_BASE_URL=…`) on stdout when ready.
 */
export async function serveTiny(
  flags: TinyServeFlags,
  io: CliIo = processIo,
  importer?: () => Promise<TinyLlmModule>,
): Promise<void> {
  const { startTinyServer } = await loadTinyLlm(importer);
  const shape = {
    ...(flags.dModel === undefined ? {} : { dModel: flags.dModel }),
    ...(flags.layers === undefined ? {} : { nLayers: flags.layers }),
    ...(flags.heads === undefined ? {} : { nHeads: flags.heads }),
    ...(flags.dFf === undefined ? {} : { dFF: flags.dFf }),
    ...(flags.maxSeqLen === undefined ? {} : { maxSeqLen: flags.maxSeqLen }),
  };
  const server = await startTinyServer({
    weightsDir: flags.dir,
    version: flags.version,
    port: flags.port,
    host: flags.host,
    token: flags.token ?? process.env.AGL_TINY_TOKEN,
    modelName: flags.modelName,
    init: { config: shape, seed: flags.seed },
    samplingSeed: flags.samplingSeed,
    prefixCacheMiB: flags.prefixCacheMib,
    tinker: flags.tinker === true,
  });
  io.out(`AGL_TINY_URL=${server.url}`);
  if (server.tinkerUrl) {
    io.out(`TINKER_BASE_URL=${server.tinkerUrl}`);
    io.err(
      `agl tiny: Tinker API at ${server.tinkerUrl}/api/v1 (base models "${server.current.modelId.split('@')[0]}" and "${server.current.modelId}")`,
    );
  }
  io.err(`agl tiny: serving ${server.current.modelId} (OpenAI base URL ${server.url}/v1); Ctrl-C to stop.`);
  await serveUntilSignal({
    io,
    label: 'agl tiny',
    stopping: 'closing the server',
    shutdown: () => server.close(),
  });
}

/** `agl tiny serve`. */
export function tinyCommand(io: CliIo = processIo): Command {
  const cmd = new Command('tiny').description('the embedded policy (@agl/tiny-llm): a small model trained on CPU');
  cmd
    .command('serve')
    .description(
      'serve the embedded policy over an OpenAI-compatible API (and, with --tinker, the Tinker API), initialising v0 in an empty --dir',
    )
    .option('--dir <path>', 'weights directory', './tiny-weights')
    .option('--version <name>', 'weights version to serve (default: the latest)')
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <port>', 'port; 0 picks a free one', integer(0, 'a port from 0 to 65535'), 4749)
    .option(
      '--token <token>',
      'require "Authorization: Bearer <token>" (Tinker clients: "X-API-Key: <token>") (default: $AGL_TINY_TOKEN)',
    )
    .option('--model-name <name>', 'model id prefix', 'agl-tiny')
    .option('--seed <n>', 'weight seed of a new v0', integer(0, 'a seed'), 0)
    .option('--sampling-seed <n>', 'seed of the seeds of requests that send none', integer(0, 'a seed'))
    .option('--prefix-cache-mib <n>', 'memory for the prefix cache (default 32; 0 turns it off)', integer(0, 'MiB'))
    .option(
      '--tinker',
      "also answer Tinker's REST API under /api/v1 (prints TINKER_BASE_URL=…; the API key is --token), with the policy's tokenizer and chat template at GET /api/v1/tokenizer",
    )
    .option('--d-model <n>', 'model width of a new v0', integer(1, 'a width'))
    .option('--layers <n>', 'layers of a new v0', integer(1, 'a layer count'))
    .option('--heads <n>', 'attention heads of a new v0', integer(1, 'a head count'))
    .option('--d-ff <n>', 'feed-forward width of a new v0', integer(1, 'a width'))
    .option('--max-seq-len <n>', 'context length of a new v0', integer(1, 'a length'))
    .action(async (flags: TinyServeFlags) => {
      if (flags.port > 65535) throw new InvalidArgumentError('--port: use an integer from 0 to 65535.');
      await serveTiny(flags, io);
    });
  return cmd;
}
