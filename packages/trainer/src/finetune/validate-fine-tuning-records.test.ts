// Local checks of the provider's documented fine-tuning format, before any upload.
import { describe, expect, it } from 'vitest';
import { ValidationError } from '@agl/core/errors';
import { validateFineTuningRecords } from './validate-fine-tuning-records';

const call = { id: 'c1', type: 'function', function: { name: 'add', arguments: '{"a":1}' } };
const sft = (i: number): { messages: Array<Record<string, unknown>>; tools?: unknown[] } => ({
  messages: [
    { role: 'user', content: `q${i}` },
    { role: 'assistant', content: null, tool_calls: [call] },
    { role: 'tool', content: '1', tool_call_id: 'c1' },
    { role: 'assistant', content: `a${i}` },
  ],
  tools: [{ type: 'function', function: { name: 'add', parameters: {} } }],
});
const dpo = (i: number) => ({
  input: { messages: [{ role: 'user', content: `q${i}` }] },
  preferred_output: [{ role: 'assistant', content: 'good' }],
  non_preferred_output: [{ role: 'assistant', content: 'bad' }],
});
const ten = <T>(make: (i: number) => T) => Array.from({ length: 10 }, (_, i) => make(i));

function problem(records: unknown[], method: 'sft' | 'dpo' = 'sft'): string {
  try {
    validateFineTuningRecords(records, method);
  } catch (err) {
    expect(err).toBeInstanceOf(ValidationError);
    return (err as Error).message;
  }
  return 'valid';
}

describe('validateFineTuningRecords', () => {
  it('accepts ten well-formed SFT and DPO lines', () => {
    expect(problem(ten(sft))).toBe('valid');
    expect(problem(ten(dpo), 'dpo')).toBe('valid');
  });

  it('names the line, the field and the fix', () => {
    const bad = ten(sft);
    bad[3] = { messages: [{ role: 'robot', content: 'x' }] };
    expect(problem(bad)).toMatch(
      /line 4: messages\[0\]\.role is "robot"; use one of system, developer, user, assistant, tool/u,
    );
    const noAnswer = ten(sft);
    noAnswer[0] = { messages: [{ role: 'user', content: 'q' }] };
    expect(problem(noAnswer)).toMatch(/line 1: messages has no assistant message to train on/u);
    const args = ten(sft);
    args[9]!.messages[1] = {
      role: 'assistant',
      content: null,
      tool_calls: [{ ...call, function: { name: 'add', arguments: '{oops' } }],
    };
    expect(problem(args)).toMatch(/line 10: messages\[1\]\.tool_calls\[0\]\.function\.arguments is not valid JSON/u);
    const orphan = ten(sft);
    orphan[2]!.messages[2] = { role: 'tool', content: '1', tool_call_id: 'nope' };
    expect(problem(orphan)).toMatch(/line 3: messages\[2\]\.tool_call_id must name a tool call of an earlier/u);
    const twoOutputs = ten(dpo);
    twoOutputs[5]!.preferred_output.push({ role: 'assistant', content: 'more' });
    expect(problem(twoOutputs, 'dpo')).toMatch(/line 6: preferred_output must hold exactly one assistant message/u);
    expect(problem(ten(sft), 'dpo')).toMatch(/line 1: input must be/u);
  });

  it('enforces the minimum number of examples and the per-example token limit', () => {
    expect(problem(ten(sft).slice(0, 9))).toMatch(/has 9 example\(s\); the provider needs at least 10/u);
    const long = ten(sft);
    long[7]!.messages[0] = { role: 'user', content: 'x'.repeat(300_000) };
    expect(problem(long)).toMatch(/line 8 holds about 75\d\d\d tokens, over the limit of 65536/u);
  });
});
