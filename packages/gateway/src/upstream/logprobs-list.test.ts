import { seededRandom } from '@agl/core';
import { describe, expect, it } from 'vitest';
import { parses } from '../__fixtures__/fuzz-helpers';
import { logprobsListEnd } from './logprobs-list';
import { parseUpstreamJson } from './upstream-json';

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const TOKENS = ['w', ' ', '', 'a "quoted" \\ word', 'tab\there\nnew', '\u0001\u001f', 'é ☃ 😀', '</s>', '0'];
const NUMBERS = [0, -0.9, -1e-7, -12.5, -3.0000001, -2.5e-21, -100];

function entry(rand: () => number, top: boolean): Record<string, unknown> {
  const token = pick(rand, TOKENS);
  const base = { token, logprob: pick(rand, NUMBERS), bytes: rand() < 0.1 ? null : [...Buffer.from(token)] };
  return top
    ? { ...base, top_logprobs: Array.from({ length: Math.floor(rand() * 3) }, () => entry(rand, false)) }
    : base;
}

function randomList(rand: () => number): string {
  const list = Array.from({ length: Math.floor(rand() * 6) }, () => entry(rand, true));
  return JSON.stringify(list, null, rand() < 0.3 ? 2 : undefined);
}

describe('logprobsListEnd', () => {
  it('matches logprobs lists as servers write them, compact or indented, from any position', () => {
    const rand = seededRandom(3);
    for (let n = 0; n < 300; n += 1) {
      const list = randomList(rand);
      expect([list, logprobsListEnd(list, 0)]).toEqual([list, list.length]);
      const head = '{"logprobs":{"content":';
      expect(logprobsListEnd(`${head}${list}},"x":1}`, head.length)).toBe(head.length + list.length);
    }
    expect(logprobsListEnd('[ ]', 0)).toBe(3);
    expect(
      logprobsListEnd('[{"token":"\\u00e9","logprob":-1E+2,"bytes":[195,169],"top_logprobs":[]}]', 0),
    ).toBeGreaterThan(0);
  });

  it('never matches text that is not valid JSON (every one-character corruption of some lists)', () => {
    const rand = seededRandom(5);
    for (let n = 0; n < 40; n += 1) {
      const list = randomList(rand);
      for (let i = 0; i < list.length; i += 1) {
        for (const replacement of ['', '"', '\\', ',', '}', ']', '[', 'x', '\n', '0', '.', '-', 'e', '\u0001']) {
          const broken = list.slice(0, i) + replacement + list.slice(i + 1);
          const end = logprobsListEnd(broken, 0);
          if (end >= 0) expect([broken, parses(broken.slice(0, end))]).toEqual([broken, true]);
        }
      }
    }
  });

  it('leaves other shapes to the byte scanner (-1)', () => {
    const other = [
      '[{"logprob":-1,"token":"w","bytes":null,"top_logprobs":[]}]', // another key order
      '[{"token":"w","logprob":-1,"bytes":null,"top_logprobs":[],"extra":1}]',
      '[{"token":"w","logprob":-1,"bytes":null}]', // no top_logprobs
      '[{"token":"w","logprob":"-1","bytes":null,"top_logprobs":[]}]',
      '[1, 2]',
      '{"token":"w"}',
      '[{"token":"w","logprob":01,"bytes":null,"top_logprobs":[]}]',
    ];
    for (const text of other) expect([text, logprobsListEnd(text, 0)]).toEqual([text, -1]);
  });
});

describe('parseUpstreamJson with and without the fast path', () => {
  it('gives the same result whichever path cuts the list out', () => {
    const rand = seededRandom(9);
    for (let n = 0; n < 100; n += 1) {
      const content = JSON.parse(randomList(rand)) as unknown[];
      // An extra key in the first entry makes the fast path decline, so the byte scanner cuts the same list.
      const unusual = content.length > 0 ? [{ ...(content[0] as object), extra: true }, ...content.slice(1)] : content;
      for (const list of [content, unusual]) {
        const answer = {
          id: 'c',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'hi' }, logprobs: { content: list }, token_ids: [5, 6] },
          ],
          prompt_token_ids: [1],
        };
        // ASCII-only JSON (non-ASCII escaped) is one byte per character, so the fast path applies; the raw UTF-8 form is not.
        const ascii = JSON.stringify(answer).replace(
          /[\u007f-\uffff]/g,
          (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
        );
        for (const text of [ascii, JSON.stringify(answer)]) {
          const parsed = parseUpstreamJson(Buffer.from(text, 'utf8'), true);
          expect(JSON.parse(parsed.logprobsContentJson!)).toEqual(list);
          expect(parsed.body).toEqual({ ...answer, choices: [{ ...answer.choices[0], logprobs: { content: null } }] });
        }
      }
    }
  });
});
