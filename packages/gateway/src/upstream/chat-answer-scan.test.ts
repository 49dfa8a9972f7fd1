import { seededRandom } from '@agl/core';
import { describe, expect, it } from 'vitest';
import { scanChatAnswer } from './chat-answer-scan';
import { findJsonPath } from './json-scan';
import { type ClientAsked, stripResponse } from './upstream-body';
import { logprobsListSkip } from './upstream-json';

const utf8 = (text: string): Buffer => Buffer.from(text, 'utf8');
const ASKED: ClientAsked[] = [
  { tokenIds: false, logprobs: false, usage: false },
  { tokenIds: true, logprobs: false, usage: false },
  { tokenIds: false, logprobs: true, usage: false },
  { tokenIds: true, logprobs: true, usage: false },
];
const CONTENT_PATH = ['choices', 0, 'logprobs', 'content'] as const;

/** What the client must get: the parsed answer with `stripResponse` applied. */
function expected(text: string, asked: ClientAsked): unknown {
  const body = JSON.parse(text) as Record<string, unknown>;
  stripResponse(body, asked);
  return body;
}

const pick = <T>(rand: () => number, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;

/** A random vLLM-style chat answer as JSON text: members in random order, extras, odd values, duplicates, whitespace. */
function randomAnswer(rand: () => number): string {
  const ws = (): string => pick(rand, ['', '', ' ', '\n  ', '\t']);
  const member = (key: string, value: unknown): string =>
    `${ws()}${JSON.stringify(key)}${ws()}:${ws()}${typeof value === 'string' && value.startsWith('RAW:') ? value.slice(4) : JSON.stringify(value)}`;
  const object = (members: string[]): string => `{${members.join(',')}${ws()}}`;
  const logprobs = (): unknown =>
    pick(rand, [
      null,
      {
        content: [
          {
            token: 'hi',
            logprob: -0.5,
            bytes: [104, 105],
            top_logprobs: [{ token: 'ho', logprob: -1.5, bytes: null }],
          },
        ],
        refusal: null,
      },
      { content: [{ token: 'é "q" \\ 😀', logprob: -2e-7, bytes: [195, 169], top_logprobs: [] }] },
      { refusal: null, content: null },
      { content: [] },
      'RAW:{"content":[{"token":"a","logprob":-1}],"content":[{"token":"b","logprob":-2}]}',
    ]);
  const choice = (index: number): string => {
    const members = [
      member('index', index),
      member('message', { role: 'assistant', content: pick(rand, ['42', 'é ☃', '{"a": [1]}']) }),
      member('finish_reason', 'stop'),
    ];
    if (rand() < 0.8) members.push(member('logprobs', logprobs()));
    if (rand() < 0.8) members.push(member('token_ids', [5, 6, 7]));
    if (rand() < 0.3) members.push(member('prompt_token_ids', [1, 2]));
    if (rand() < 0.1) members.push(member('logprobs', logprobs()));
    if (rand() < 0.1) members.push(member('token_ids', []));
    members.sort(() => rand() - 0.5);
    return object(members);
  };
  const choices =
    rand() < 0.1
      ? pick(rand, ['RAW:[]', 'RAW:null', 'RAW:[1, "x", null]'])
      : `RAW:[${Array.from({ length: 1 + Math.floor(rand() * 3) }, (_, i) => choice(i)).join(',')}]`;
  const members = [
    member('id', 'chatcmpl-1'),
    member('object', 'chat.completion'),
    member('model', 'm'),
    member('choices', choices),
    member('usage', { prompt_tokens: 3, completion_tokens: 1 }),
  ];
  if (rand() < 0.8) members.push(member('prompt_token_ids', [1, 2, 3]));
  if (rand() < 0.3) members.push(member('prompt_logprobs', [null, { '2': { logprob: -1 } }]));
  if (rand() < 0.1) members.push(member('choices', choices));
  if (rand() < 0.1) members.push(member('prompt_token_ids', null));
  members.sort(() => rand() - 0.5);
  return `${ws()}${object(members)}${ws()}`;
}

describe('scanChatAnswer', () => {
  it('gives the client the same JSON as parsing and stripping, and finds the logprobs list findJsonPath finds', () => {
    const rand = seededRandom(11);
    for (let n = 0; n < 400; n += 1) {
      const text = randomAnswer(rand);
      const bytes = utf8(text);
      for (const asked of ASKED) {
        const scan = scanChatAnswer(
          bytes,
          asked,
          rand() < 0.5 ? logprobsListSkip(bytes, bytes.toString('utf8')) : undefined,
        );
        expect(scan, text).not.toBeNull();
        expect([text, asked, JSON.parse(Buffer.from(scan!.clientBytes).toString('utf8'))]).toEqual([
          text,
          asked,
          expected(text, asked),
        ]);
        expect([text, scan!.logprobsContent]).toEqual([text, findJsonPath(bytes, CONTENT_PATH)]);
      }
    }
  });

  it('hands back the backend’s own buffer when there is nothing to cut', () => {
    const bytes = utf8(
      '{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}',
    );
    expect(scanChatAnswer(bytes, ASKED[0]!)!.clientBytes).toBe(bytes);
    const all = utf8('{"choices":[{"token_ids":[1],"logprobs":{"content":[]}}],"prompt_token_ids":[2]}');
    expect(scanChatAnswer(all, ASKED[3]!)!.clientBytes).toBe(all);
  });

  it('cuts members wherever they sit, with valid commas', () => {
    const cut = (text: string): string =>
      Buffer.from(scanChatAnswer(utf8(text), ASKED[0]!)!.clientBytes).toString('utf8');
    expect(cut('{"prompt_token_ids":[1],"id":"a"}')).toBe('{"id":"a"}');
    expect(cut('{"id":"a", "prompt_token_ids":[1]}')).toBe('{"id":"a"}');
    expect(cut('{ "prompt_token_ids" : [1] , "prompt_logprobs":null }')).toBe('{}');
    expect(cut('{"choices":[{"token_ids":[1],"logprobs":{"content":[]},"index":0}]}')).toBe(
      '{"choices":[{"logprobs":null,"index":0}]}',
    );
  });

  it('gives up (null) on anything but one valid JSON object, and on escaped keys', () => {
    for (const text of [
      '',
      '[1]',
      '"x"',
      '{"a":1',
      '{"a":1}}',
      '{"a":1} x',
      '{"choices":[{"token_ids":[1,]}]}',
      '{"a":01}',
      '{"\\u0063hoices":[]}',
      '{"choices":[{"to\\u006ben_ids":[1]}]}',
    ]) {
      expect([text, scanChatAnswer(utf8(text), ASKED[0]!)]).toEqual([text, null]);
    }
    expect(scanChatAnswer(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), utf8('{"a":1}')]), ASKED[0]!)).toBeNull();
  });
});
