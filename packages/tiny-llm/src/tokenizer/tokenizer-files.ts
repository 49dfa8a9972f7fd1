import { createHash } from 'node:crypto';
import { UserError } from '@agl/core/errors';
import { TINY_CHAT_TEMPLATE } from '../chat/jinja-chat-template';
import { SPECIAL_TOKENS, type TinyTokenizer } from './tiny-tokenizer';

/**
 * A tiny tokenizer in Hugging Face's portable form: `tokenizer.json` (a byte-level BPE with the merges in rank order
 * and the chat special tokens as added tokens) and `tokenizer_config.json` (the Jinja chat template, `<|bos|>` and
 * `<|end|>`). What `@agl/tinker`'s `ChatTokenizer.fromFiles` reads.
 */
export interface TinyTokenizerFiles {
  /** `agl-tiny/<vocab size>-<hash>`: the same id for the same merges and template, on any server. */
  tokenizerId: string;
  tokenizerJson: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown>;
}

/** GPT-2's byte → printable character map, which byte-level BPE vocabularies are written in. */
function byteChars(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const out: string[] = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) out[b] = String.fromCharCode(printable.includes(b) ? b : 256 + extra++);
  return out;
}

/** The tokenizer id of a tiny tokenizer: its vocabulary size and a hash of its merges and the chat template. */
export function tinyTokenizerId(tokenizer: TinyTokenizer): string {
  const hash = createHash('sha256').update(JSON.stringify(tokenizer.spec.merges)).update(TINY_CHAT_TEMPLATE);
  return `agl-tiny/${tokenizer.vocabSize}-${hash.digest('hex').slice(0, 12)}`;
}

/**
 * The tokenizer and chat template in Hugging Face's format, so a Tinker client renders prompts to exactly the ids the
 * server's own chat route encodes. Throws `UserError` for merges that repeat a token's bytes (such a vocabulary has no
 * string-keyed form).
 */
export function tinyTokenizerFiles(tokenizer: TinyTokenizer): TinyTokenizerFiles {
  const chars = byteChars();
  const text = (id: number): string => Array.from(tokenizer.tokenBytes(id), (b) => chars[b]).join('');
  const vocab: Record<string, number> = {};
  for (let b = 0; b < 256; b++) vocab[chars[b]!] = b;
  SPECIAL_TOKENS.forEach((s, i) => (vocab[s] = 256 + i));
  const base = 256 + SPECIAL_TOKENS.length;
  const merges = tokenizer.spec.merges.map(([a, b], i) => {
    const merged = text(base + i);
    if (vocab[merged] !== undefined)
      throw new UserError(
        `Tokenizer merge ${i} makes "${merged}", which token ${vocab[merged]} already spells; retrain the merges (trainBpe) so every token is unique.`,
      );
    vocab[merged] = base + i;
    return [text(a), text(b)];
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };
  return {
    tokenizerId: tinyTokenizerId(tokenizer),
    tokenizerJson: {
      version: '1.0',
      truncation: null,
      padding: null,
      added_tokens: SPECIAL_TOKENS.map((content, i) => ({
        id: 256 + i,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: byteLevel,
      post_processor: null,
      decoder: byteLevel,
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: null,
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: false,
        byte_fallback: false,
        ignore_merges: false,
        vocab,
        merges,
      },
    },
    tokenizerConfig: {
      tokenizer_class: 'PreTrainedTokenizerFast',
      bos_token: '<|bos|>',
      eos_token: '<|end|>',
      pad_token: '<|pad|>',
      clean_up_tokenization_spaces: false,
      model_max_length: 1_000_000,
      chat_template: TINY_CHAT_TEMPLATE,
    },
  };
}
