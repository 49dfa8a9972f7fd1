import { describe, expect, it } from 'vitest';
import { utf8Text } from './utf8-text';

describe('utf8Text', () => {
  it('decodes ASCII, multi-byte UTF-8 and invalid bytes exactly as Buffer#toString("utf8")', () => {
    const samples = [
      Buffer.from('{"a":"plain ascii","n":[1,2,3]}'),
      Buffer.from('{"a":"é ü 漢字 😀 \u2028"}'),
      Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      Buffer.from([0x80]),
      Buffer.alloc(0),
      Buffer.from('x'.repeat(70_000) + 'é'),
    ];
    for (const bytes of samples) expect(utf8Text(bytes)).toBe(bytes.toString('utf8'));
  });
});
