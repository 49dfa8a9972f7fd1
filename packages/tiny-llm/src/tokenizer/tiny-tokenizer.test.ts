import { describe, expect, it } from 'vitest';
import { nextSegmentPosition, SPECIAL_TOKENS, TinyTokenizer, trainBpe } from './tiny-tokenizer';

const SAMPLES = ['hello world', 'Grüße, 世界! 🎉', '<|end|> is not special here', '', 'a\nb\tc  {"e":"12*34"}'];

describe('TinyTokenizer', () => {
  it('round-trips text byte-level and with learned merges', () => {
    const corpus = Array.from({ length: 20 }, (_, i) => `calc{"e":"${i}*${i + 3}"} hello world`);
    const spec = trainBpe({ corpus, merges: 40 });
    expect(spec.merges.length).toBeGreaterThan(10);
    for (const tok of [new TinyTokenizer(), new TinyTokenizer(spec)]) {
      for (const s of [...SAMPLES, ...corpus]) expect(tok.decode(tok.encode(s))).toBe(s);
    }
    const bpe = new TinyTokenizer(spec);
    expect(bpe.encode(corpus[5]!).length).toBeLessThan(new TextEncoder().encode(corpus[5]!).length / 2);
    expect(bpe.vocabSize).toBe(256 + SPECIAL_TOKENS.length + spec.merges.length);
  });

  it('learns the same merges from the same corpus', () => {
    const corpus = ['abababab cdcd', 'abab cd'];
    expect(trainBpe({ corpus, merges: 5 })).toEqual(trainBpe({ corpus, merges: 5 }));
  });

  it('never turns plain text into special tokens', () => {
    const tok = new TinyTokenizer();
    const ids = tok.encode('<|end|><|call|>');
    expect(ids.some((id) => tok.isSpecial(id))).toBe(false);
    expect(tok.encodeSegments([{ special: '<|end|>' }])).toEqual([tok.specialId('<|end|>')]);
  });

  it('streams multi-byte characters without splitting them', () => {
    const tok = new TinyTokenizer();
    const ids = tok.encode('é🎉x');
    const dec = tok.decoder();
    const pieces = ids.map((id) => dec.push([id]));
    expect(pieces.join('') + dec.flush()).toBe('é🎉x');
    expect(pieces.every((p) => !p.includes('\uFFFD'))).toBe(true);
  });

  it('rejects merges that point at unknown tokens', () => {
    expect(() => new TinyTokenizer({ kind: 'byte-bpe', merges: [[9999, 1]] })).toThrow(/unknown or special/);
  });

  it('counts segment positions from the last special token', () => {
    const tok = new TinyTokenizer();
    const ids = tok.encodeSegments([
      { text: 'ab' },
      { special: '<|user|>' },
      { text: '12' },
      { special: '<|end|>' },
      { special: '<|tool|>' },
      { text: '7' },
    ]);
    let at = -1;
    const positions = ids.map((id) => (at = nextSegmentPosition(at, id)));
    expect(positions).toEqual([0, 1, 0, 1, 2, 0, 0, 1]);
  });
});
