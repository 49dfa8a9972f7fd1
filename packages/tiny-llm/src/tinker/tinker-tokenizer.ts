import { NotFoundError } from '@agl/core/errors';
import { type TinyTokenizer } from '../tokenizer/tiny-tokenizer';
import { tinyTokenizerFiles, tinyTokenizerId } from '../tokenizer/tokenizer-files';
import { badField } from './tinker-wire';

/** The tokenizers this server has named in `get_info` or served, by tokenizer id (`agl-tiny/<vocab>-<hash>`). */
export class TinkerTokenizers {
  readonly #byId = new Map<string, TinyTokenizer>();

  /** Records a tokenizer and returns its id. */
  register(tokenizer: TinyTokenizer): string {
    const id = tinyTokenizerId(tokenizer);
    this.#byId.set(id, tokenizer);
    return id;
  }

  /** A recorded tokenizer; 404 naming the id when this server never named it. */
  byId(id: string): TinyTokenizer {
    const tok = this.#byId.get(id);
    if (!tok)
      throw new NotFoundError(
        'tokenizer',
        id,
        `No tokenizer "${id}" here; ask by model (GET /api/v1/tokenizer?model=<base model or tinker:// path>).`,
      );
    return tok;
  }
}

/**
 * The answer of AGL's extension `GET /api/v1/tokenizer?model=…|tokenizer_id=…`: the policy's tokenizer and chat
 * template as Hugging Face files, which `@agl/tinker`'s `tokenizerForModel` renders prompts with (the hub does not
 * know this model). `model` is a base model name (`agl-tiny`, `agl-tiny@<version>`) or a `tinker://` sampler path.
 */
export async function tokenizerAnswer(
  query: URLSearchParams,
  registry: TinkerTokenizers,
  tokenizerOf: (model: string) => Promise<TinyTokenizer>,
): Promise<Record<string, unknown>> {
  const id = query.get('tokenizer_id');
  const model = query.get('model');
  if (!id && !model)
    throw badField('model', 'is required (a base model name or tinker:// sampler path), or give tokenizer_id.');
  const tok = id ? registry.byId(id) : await tokenizerOf(model!);
  registry.register(tok);
  const files = tinyTokenizerFiles(tok);
  return {
    tokenizer_id: files.tokenizerId,
    kind: 'agl-tiny',
    tokenizer_json: files.tokenizerJson,
    tokenizer_config: files.tokenizerConfig,
  };
}
