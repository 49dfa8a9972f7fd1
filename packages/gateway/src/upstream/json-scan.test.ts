import { seededRandom } from '@agl/core';
import { describe, expect, it } from 'vitest';
import { parses } from '../__fixtures__/fuzz-helpers';
import {
  findJsonPath as findInBytes,
  MAX_SCAN_DEPTH,
  scanValue as scanBytes,
  skipWhitespace,
} from '@agl/core/internal/json-scan';
import { parseUpstreamJson as parseBytes } from './upstream-json';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
const scanValue = (text: string, i: number): number => scanBytes(utf8(text), i);
/** The range, in bytes, of the value at `path`; `slice` cuts it out of the text. */
const findJsonPath = (text: string, path: readonly (string | 0)[]): { start: number; end: number } | null =>
  findInBytes(utf8(text), path);
const slice = (text: string, range: { start: number; end: number }): string =>
  utf8(text).toString('utf8', range.start, range.end);
const parseUpstreamJson = (text: string, logprobsAsText: boolean): ReturnType<typeof parseBytes> =>
  parseBytes(utf8(text), logprobsAsText);

/** What the scanner says about a whole text: valid JSON or not. */
const scansAsValid = (text: string): boolean => {
  const bytes = utf8(text);
  const end = scanBytes(bytes, 0);
  return end >= 0 && skipWhitespace(bytes, end) === bytes.length;
};
function randomValue(rand: () => number, depth: number): unknown {
  const kind = Math.floor(rand() * (depth > 3 ? 5 : 7));
  if (kind === 0) return null;
  if (kind === 1) return rand() < 0.5;
  if (kind === 2) return [0, -1, 3.25, -0.001, 1e21, 123456789, -2.5e-7][Math.floor(rand() * 7)];
  if (kind === 3 || kind === 4)
    return ['', 'w', 'a "quoted" \\ word', 'tab\there\nnewline', 'é ☃ 😀', '\u0001\u001f', '</script>'][
      Math.floor(rand() * 7)
    ];
  if (kind === 5) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(rand, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 4); i > 0; i -= 1)
    out[['a', 'content', 'logprobs', 'k"ey', ''][Math.floor(rand() * 5)]!] = randomValue(rand, depth + 1);
  return out;
}

describe('scanValue', () => {
  it('agrees with JSON.parse on hand-picked valid and invalid texts', () => {
    const valid = [
      '0',
      '-0',
      '1.5e+3',
      '-12.0E-2',
      '"a\\u00e9\\n"',
      'true',
      'false',
      'null',
      '[]',
      '{}',
      ' [ 1 , { "a" : [ ] } ] ',
      '{"a":{"b":[1,2,{"c":"d"}]}}',
    ];
    const invalid = [
      '',
      ' ',
      '01',
      '1.',
      '.5',
      '1e',
      '-',
      '+1',
      '"abc',
      '"a\\x"',
      '"a\\u12G4"',
      '"tab\there"',
      'tru',
      'nul',
      '[1,]',
      '[,1]',
      '{"a"}',
      '{"a":1,}',
      '{a:1}',
      '[1 2]',
      '{"a":1 "b":2}',
      '[1]]',
      '[[1]',
      'NaN',
      '1 2',
    ];
    for (const text of valid) expect([text, scansAsValid(text)]).toEqual([text, true]);
    for (const text of invalid) expect([text, scansAsValid(text), parses(text)]).toEqual([text, false, false]);
  });

  it('agrees with JSON.parse on random JSON texts and on every one-character corruption of some of them', () => {
    const rand = seededRandom(7);
    for (let n = 0; n < 300; n += 1) {
      const value = randomValue(rand, 0);
      const text = JSON.stringify(value, null, n % 3 === 0 ? 1 : undefined) ?? 'null';
      expect(scansAsValid(text)).toBe(true);
      if (n % 10 !== 0) continue;
      for (let i = 0; i < text.length; i += 1) {
        for (const replacement of ['', '"', '\\', ',', '}', ']', 'x', '\n', '0']) {
          const broken = text.slice(0, i) + replacement + text.slice(i + 1);
          expect([broken, scansAsValid(broken)]).toEqual([broken, parses(broken)]);
        }
      }
    }
  });

  it('gives up (-1) on nesting deeper than its limit instead of overflowing', () => {
    // The innermost (empty) array needs no slot, so MAX_SCAN_DEPTH + 1 levels still fit.
    const deep = '['.repeat(MAX_SCAN_DEPTH + 2) + ']'.repeat(MAX_SCAN_DEPTH + 2);
    expect(scanValue(deep, 0)).toBe(-1);
    const ok = '['.repeat(MAX_SCAN_DEPTH + 1) + ']'.repeat(MAX_SCAN_DEPTH + 1);
    expect(scanValue(ok, 0)).toBe(utf8(ok).length);
  });
});

describe('findJsonPath', () => {
  const path = ['choices', 0, 'logprobs', 'content'] as const;

  it('finds the value at the path, with JSON.parse semantics for duplicate keys', () => {
    const text = '{"choices":[{"logprobs":{"content":[{"token":"w"}]}},{"logprobs":{"content":[2]}}],"usage":{}}';
    const range = findJsonPath(text, path)!;
    expect(JSON.parse(slice(text, range))).toEqual([{ token: 'w' }]);
    const duplicate = '{"choices":[{"logprobs":{"content":[1]},"logprobs":{"content":[2, 3]}}]}';
    const last = findJsonPath(duplicate, path)!;
    expect(slice(duplicate, last)).toBe('[2, 3]');
    expect(findJsonPath('{"choices":[{"logprobs":{"content":[1]},"logprobs":null}]}', path)).toBeNull();
  });

  it('returns null when the path is missing, the text is invalid, or a key on the way is escaped', () => {
    expect(findJsonPath('{"choices":[]}', path)).toBeNull();
    expect(findJsonPath('{"choices":[{"logprobs":null}]}', path)).toBeNull();
    expect(findJsonPath('{"choices":[{"logprobs":{"content":[1]}}]', path)).toBeNull();
    expect(findJsonPath('{"choices":[{"logprobs":{"content":[1]}}]} x', path)).toBeNull();
    expect(findJsonPath('{"choices":[{"logprob\\u0073":{"content":[1]}}]}', path)).toBeNull();
    expect(findJsonPath('{"choices":[{"logprobs":{"content":[1,]}}]}', path)).toBeNull();
  });

  it('matches JSON.parse on random documents that hold the path', () => {
    const rand = seededRandom(11);
    for (let n = 0; n < 200; n += 1) {
      const first = { logprobs: { content: randomValue(rand, 1), x: randomValue(rand, 2) }, y: randomValue(rand, 2) };
      const text = JSON.stringify(
        { id: randomValue(rand, 2), choices: [first, randomValue(rand, 2)] },
        null,
        n % 2 === 0 ? 2 : undefined,
      );
      const range = findJsonPath(text, path)!;
      expect(JSON.parse(slice(text, range))).toEqual(first.logprobs.content);
    }
  });
});

describe('parseUpstreamJson', () => {
  const answer = {
    id: 'chatcmpl-1',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: 'hi "there"' },
        logprobs: { content: [{ token: 'hi', logprob: -0.5, bytes: [104, 105], top_logprobs: [] }], refusal: null },
        token_ids: [5, 6],
      },
    ],
    prompt_token_ids: [1, 2, 3],
  };

  it('keeps the first choice’s logprobs list as text and parses the rest', () => {
    const text = JSON.stringify(answer);
    const parsed = parseUpstreamJson(text, true);
    expect(JSON.parse(parsed.logprobsContentJson!)).toEqual(answer.choices[0]!.logprobs.content);
    expect(parsed.body).toEqual({
      ...answer,
      choices: [{ ...answer.choices[0], logprobs: { content: null, refusal: null } }],
    });
    expect(parseUpstreamJson(text, false)).toEqual({ body: answer, logprobsContentJson: null });
  });

  it('decodes UTF-8 across the cut and, like undici’s body.text(), drops a byte-order mark', () => {
    const text = JSON.stringify({
      choices: [
        { message: { content: 'é ☃ 😀' }, logprobs: { content: [{ token: '😀', bytes: [240, 159, 152, 128] }] } },
      ],
    });
    const parsed = parseUpstreamJson(text, true);
    expect(JSON.parse(parsed.logprobsContentJson!)).toEqual([{ token: '😀', bytes: [240, 159, 152, 128] }]);
    expect(parsed.body).toEqual({ choices: [{ message: { content: 'é ☃ 😀' }, logprobs: { content: null } }] });
    const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8(text)]);
    expect(parseBytes(withBom, true)).toEqual({ body: JSON.parse(text), logprobsContentJson: null });
  });

  it('falls back to a plain parse (and its error) when the list is absent or the text is broken', () => {
    expect(parseUpstreamJson('{"choices":[{"logprobs":null}]}', true)).toEqual({
      body: { choices: [{ logprobs: null }] },
      logprobsContentJson: null,
    });
    expect(() => parseUpstreamJson('{"choices":[{"logprobs":{"content":[1]}}]', true)).toThrow(SyntaxError);
    expect(() => parseUpstreamJson('{"choices":[{"logprobs":{"content":[1]}}], oops}', true)).toThrow(SyntaxError);
    expect(() => parseUpstreamJson('[1, 2]', true)).toThrow('not a JSON object');
  });
});
