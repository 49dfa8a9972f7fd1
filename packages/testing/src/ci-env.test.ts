import { describe, expect, it } from 'vitest';
import { isCi } from './ci-env';

describe('isCi', () => {
  it('is true for any CI value but empty, 0 and false (any case)', () => {
    for (const value of ['true', '1', 'yes', 'woodpecker', 'TRUE']) expect(isCi({ CI: value }), value).toBe(true);
    for (const value of [undefined, '', ' ', '0', 'false', 'False'])
      expect(isCi({ CI: value }), String(value)).toBe(false);
  });
});
