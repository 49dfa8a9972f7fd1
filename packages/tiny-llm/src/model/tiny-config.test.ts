import { describe, expect, it } from 'vitest';
import { countParams, paramShapes, validateConfig, type TinyConfig } from './tiny-config';

const base: TinyConfig = { vocabSize: 20, dModel: 8, nLayers: 1, nHeads: 2, dFF: 16, maxSeqLen: 12 };

describe('TinyConfig', () => {
  it('adds one vocabulary-sized embedding per token shift', () => {
    const names = (c: TinyConfig) => paramShapes(c).map((p) => p.name);
    expect(names(base)).not.toContain('prev_emb');
    expect(names({ ...base, prevTokenEmbedding: true })).toContain('prev_emb');
    expect(names({ ...base, prevTokenEmbedding: true, prev2TokenEmbedding: true })).toEqual(
      expect.arrayContaining(['prev_emb', 'prev2_emb']),
    );
    expect(countParams({ ...base, prev2TokenEmbedding: true }) - countParams(base)).toBe(20 * 8);
    expect(countParams({ ...base, segmentPositions: true }) - countParams(base)).toBe(12 * 8);
    expect(names({ ...base, segmentPositions: true })).toContain('seg_emb');
  });

  it('names the bad field and the fix', () => {
    expect(() => validateConfig({ ...base, prev2TokenEmbedding: 'yes' as unknown as boolean })).toThrow(
      'TinyConfig.prev2TokenEmbedding must be true or false, got "yes"',
    );
    expect(() => validateConfig({ ...base, prevTokenEmbedding: 1 as unknown as boolean })).toThrow(
      'TinyConfig.prevTokenEmbedding must be true or false, got 1',
    );
    expect(() => validateConfig({ ...base, segmentPositions: 'on' as unknown as boolean })).toThrow(
      'TinyConfig.segmentPositions must be true or false, got "on"',
    );
    expect(() => validateConfig({ ...base, nHeads: 3 })).toThrow(
      'TinyConfig.dModel (8) must be divisible by nHeads (3)',
    );
    expect(() => validateConfig({ ...base, dModel: 0 })).toThrow('TinyConfig.dModel must be a positive integer, got 0');
    expect(() => validateConfig({ ...base, prevTokenEmbedding: true, prev2TokenEmbedding: false })).not.toThrow();
  });
});
