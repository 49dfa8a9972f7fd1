import { UserError } from '@agl/core/errors';

/** The special tokens, in id order, right after the 256 byte tokens. */
export const SPECIAL_TOKENS = [
  '<|bos|>',
  '<|end|>',
  '<|system|>',
  '<|user|>',
  '<|assistant|>',
  '<|tool|>',
  '<|tools|>',
  '<|call|>',
  '<|/call|>',
  '<|pad|>',
] as const;
/** One special token's text form. */
export type SpecialToken = (typeof SPECIAL_TOKENS)[number];

const BYTE_TOKENS = 256;

/** True when `id` is one of {@link SPECIAL_TOKENS} (they sit right after the byte tokens in every tiny tokenizer). */
export function isSpecialTokenId(id: number): boolean {
  return id >= BYTE_TOKENS && id < BYTE_TOKENS + SPECIAL_TOKENS.length;
}

/**
 * The segment position of `token` when the token before it was at `previous` (-1 for the first token): 0 for a special
 * token, which starts a segment, otherwise one more than `previous`. The one rule behind `TinyConfig.segmentPositions`
 * in the training graph, the inference model and the prefix cache.
 */
export function nextSegmentPosition(previous: number, token: number): number {
  return isSpecialTokenId(token) ? 0 : previous + 1;
}

/** The serialisable description of a tokenizer, stored with the weights. */
export interface TokenizerSpec {
  /** Always `byte-bpe`: 256 byte tokens, the specials, then the learned merges. */
  kind: 'byte-bpe';
  /** Learned merges, in rank order; merge `i` creates token `256 + specials + i`. */
  merges: Array<[number, number]>;
}

/** A piece of a chat rendering: plain text (byte/BPE encoded) or one special token. */
export type TextSegment = { text: string } | { special: SpecialToken };

/**
 * Byte-level BPE tokenizer with chat special tokens. Plain text never produces a special token (a user typing
 * `<|end|>` gets bytes), so prompts cannot inject control tokens. Every byte string is encodable.
 */
export class TinyTokenizer {
  readonly spec: TokenizerSpec;
  readonly vocabSize: number;
  readonly #bytes: Uint8Array[];
  readonly #ranks = new Map<number, number>();
  readonly #specialIds = new Map<string, number>();

  constructor(spec: TokenizerSpec = { kind: 'byte-bpe', merges: [] }) {
    if (spec.kind !== 'byte-bpe') throw new UserError(`Unknown tokenizer kind "${String(spec.kind)}"; use "byte-bpe".`);
    this.spec = spec;
    this.#bytes = [];
    for (let b = 0; b < BYTE_TOKENS; b++) this.#bytes.push(Uint8Array.of(b));
    SPECIAL_TOKENS.forEach((s, i) => {
      this.#specialIds.set(s, BYTE_TOKENS + i);
      this.#bytes.push(new TextEncoder().encode(s));
    });
    const base = BYTE_TOKENS + SPECIAL_TOKENS.length;
    spec.merges.forEach(([a, b], i) => {
      const left = this.#bytes[a];
      const right = this.#bytes[b];
      if (!left || !right || this.isSpecial(a) || this.isSpecial(b) || a >= base + i || b >= base + i) {
        throw new UserError(
          `Tokenizer merge ${i} [${a}, ${b}] refers to an unknown or special token; retrain the merges.`,
        );
      }
      const merged = new Uint8Array(left.length + right.length);
      merged.set(left);
      merged.set(right, left.length);
      this.#bytes.push(merged);
      this.#ranks.set(pairKey(a, b), i);
    });
    this.vocabSize = this.#bytes.length;
  }

  /** The id of a special token. */
  specialId(token: SpecialToken): number {
    return this.#specialIds.get(token)!;
  }

  /** True when `id` is one of {@link SPECIAL_TOKENS}. */
  isSpecial(id: number): boolean {
    return isSpecialTokenId(id);
  }

  /** Encodes plain text (specials are not recognised in it). */
  encode(text: string): number[] {
    const ids = Array.from(new TextEncoder().encode(text));
    if (this.#ranks.size === 0) return ids;
    return applyMerges(ids, this.#ranks, BYTE_TOKENS + SPECIAL_TOKENS.length);
  }

  /** Encodes a list of text and special segments. */
  encodeSegments(segments: readonly TextSegment[]): number[] {
    const out: number[] = [];
    for (const seg of segments) {
      if ('special' in seg) out.push(this.specialId(seg.special));
      else if (seg.text.length > 0) out.push(...this.encode(seg.text));
    }
    return out;
  }

  /** The raw bytes of one token (a special token's bytes are its `<|name|>` text). */
  tokenBytes(id: number): Uint8Array {
    const b = this.#bytes[id];
    if (!b) throw new UserError(`Token id ${id} is outside the vocabulary (size ${this.vocabSize}).`);
    return b;
  }

  /** The text of one token: specials as `<|name|>`, bytes decoded leniently (partial UTF-8 becomes U+FFFD). */
  tokenText(id: number): string {
    return new TextDecoder().decode(this.tokenBytes(id));
  }

  /** Decodes ids to text; specials are dropped unless `keepSpecial`. */
  decode(ids: readonly number[], options: { keepSpecial?: boolean } = {}): string {
    const decoder = this.decoder(options);
    return decoder.push(ids) + decoder.flush();
  }

  /** A streaming decoder: it holds back incomplete UTF-8 sequences until the next token completes them. */
  decoder(options: { keepSpecial?: boolean } = {}): { push(ids: readonly number[]): string; flush(): string } {
    const td = new TextDecoder('utf-8');
    return {
      push: (ids) => {
        let out = '';
        for (const id of ids) {
          if (this.isSpecial(id)) {
            out += td.decode();
            if (options.keepSpecial) out += this.tokenText(id);
          } else {
            out += td.decode(this.tokenBytes(id), { stream: true });
          }
        }
        return out;
      },
      flush: () => td.decode(),
    };
  }
}

function pairKey(a: number, b: number): number {
  return a * 65536 + b;
}

function applyMerges(ids: number[], ranks: Map<number, number>, base: number): number[] {
  const seq = ids.slice();
  for (;;) {
    let best = -1;
    let bestRank = Infinity;
    for (let i = 0; i + 1 < seq.length; i++) {
      const r = ranks.get(pairKey(seq[i]!, seq[i + 1]!));
      if (r !== undefined && r < bestRank) {
        bestRank = r;
        best = i;
      }
    }
    if (best < 0) return seq;
    const merged = base + bestRank;
    const a = seq[best]!;
    const b = seq[best + 1]!;
    const out = mergePair(seq, a, b, merged);
    seq.length = 0;
    seq.push(...out);
  }
}

/** `seq` with every occurrence of the pair (`a`, `b`), left to right, replaced by `merged`. */
function mergePair(seq: readonly number[], a: number, b: number, merged: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < seq.length; i++) {
    if (i + 1 < seq.length && seq[i] === a && seq[i + 1] === b) {
      out.push(merged);
      i++;
    } else out.push(seq[i]!);
  }
  return out;
}

/**
 * Learns byte-pair merges from text (nothing downloads: pass text you have, such as task demonstrations).
 * Deterministic: ties go to the smaller pair key.
 */
export function trainBpe(options: { corpus: readonly string[]; merges: number; minCount?: number }): TokenizerSpec {
  const base = BYTE_TOKENS + SPECIAL_TOKENS.length;
  const seqs = options.corpus.map((t) => Array.from(new TextEncoder().encode(t)));
  const merges: Array<[number, number]> = [];
  const minCount = options.minCount ?? 2;
  for (let m = 0; m < options.merges; m++) {
    const counts = new Map<number, number>();
    for (const s of seqs)
      for (let i = 0; i + 1 < s.length; i++) {
        const k = pairKey(s[i]!, s[i + 1]!);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
    let bestKey = -1;
    let bestCount = 0;
    for (const [k, c] of counts)
      if (c > bestCount || (c === bestCount && k < bestKey)) {
        bestKey = k;
        bestCount = c;
      }
    if (bestKey < 0 || bestCount < minCount) break;
    const a = Math.floor(bestKey / 65536);
    const b = bestKey % 65536;
    const id = base + m;
    merges.push([a, b]);
    for (let si = 0; si < seqs.length; si++) seqs[si] = mergePair(seqs[si]!, a, b, id);
  }
  return { kind: 'byte-bpe', merges };
}
