import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/validation-error';
import { createRedactor, describeRedactions, REDACTED } from './redactor';
import { redactPatternsFromEnv } from './redact-patterns';

const KEY = 'sk-proj-Abc123Def456Ghi789Jkl012Mno345';

describe('Redactor', () => {
  it('finds a key split by zero-width characters or spelled with lookalike letters', () => {
    const r = createRedactor();
    const split = `my key ${KEY.slice(0, 12)}\u200b${KEY.slice(12, 20)}\u2060${KEY.slice(20)} end`;
    expect(r.text(split)).toBe(`my key ${REDACTED} end`);
    // Cyrillic "А" and fullwidth letters in an AWS id.
    expect(r.text('id \u0410KIAIOSFODNN7EXAMPL\uff25 here')).toBe(`id ${REDACTED} here`);
    expect(r.text('pass\u200bword: letmein99')).not.toContain('letmein99');
  });

  it('masks a key split across two adjacent messages in both', () => {
    const r = createRedactor();
    const [a, b] = r.texts([`here is half: ${KEY.slice(0, 14)}`, `${KEY.slice(14)} and the rest`]);
    expect(a).toBe(`here is half: ${REDACTED}`);
    expect(b).toBe(`${REDACTED} and the rest`);
  });

  it('json: masks secret-named keys whole, scans every string, and scans message lists as one conversation', () => {
    const r = createRedactor();
    const input = {
      question: 'what is 2+2?',
      config: { password: 'pw', apiKey: 'plainvalue', nested: [`AKIAIOSFODNN7EXAMPLE`] },
      messages: [
        { role: 'user', content: `key ${KEY.slice(0, 16)}` },
        { role: 'user', content: `${KEY.slice(16)}!` },
      ],
      n: 3,
    };
    const out = r.json(input);
    expect(out.question).toBe('what is 2+2?');
    expect(out.config).toEqual({ password: REDACTED, apiKey: REDACTED, nested: [REDACTED] });
    expect(JSON.stringify(out)).not.toContain(KEY.slice(16));
    expect(out.n).toBe(3);
    const clean = { a: 'hello', b: [1, 'x'] };
    expect(r.json(clean)).toBe(clean);
  });

  it('attributes: prompts joined per conversation, tool arguments and definitions scanned, authorization keys masked', () => {
    const r = createRedactor();
    const attributes = {
      'gen_ai.prompt.0.content': `start ${KEY.slice(0, 15)}`,
      'gen_ai.prompt.1.content': `${KEY.slice(15)} end`,
      'gen_ai.completion.0.tool_calls.0.arguments': JSON.stringify({ db: 'postgres://u:pa55word@h/db' }),
      'gen_ai.request.functions.0.description': 'Calls the API with api_key=Zx81ab77cd',
      'http.request.header.authorization': 'whatever',
      'gen_ai.usage.input_tokens': 10,
    };
    const out = r.attributes(attributes);
    expect(JSON.stringify(out)).not.toMatch(/pa55word|Zx81ab77cd|whatever/);
    expect(out['gen_ai.prompt.0.content']).toBe(`start ${REDACTED}`);
    expect(out['gen_ai.prompt.1.content']).toBe(`${REDACTED} end`);
    expect(out['gen_ai.usage.input_tokens']).toBe(10);
    expect(r.attributes({ a: 'plain' })).toEqual({ a: 'plain' });
  });

  it('span: events, resource and status are scanned too', () => {
    const r = createRedactor();
    const span = {
      name: 'x',
      attributes: {},
      events: [{ name: 'e', attributes: { message: `failed with ${KEY}` } }],
      resource: { attributes: { 'service.token': 'abcdefgh12' } },
      status: { description: `401 for ${KEY}` },
    };
    const out = r.span(span);
    expect(JSON.stringify(out)).not.toContain(KEY);
    expect(JSON.stringify(out)).not.toContain('abcdefgh12');
    expect(out.name).toBe('x');
  });

  it('user patterns (option and AGL_REDACT_PATTERNS) are masked; a named group limits the mask', () => {
    const r = createRedactor({
      patterns: ['acme_[0-9a-f]{8}', /ticket=(?<secret>[A-Z]{4})/],
      env: { AGL_REDACT_PATTERNS: '["internal-[0-9]{6}"]' },
    });
    expect(r.text('a acme_0123abcd b ticket=WXYZ c internal-123456')).toBe(
      `a ${REDACTED} b ticket=${REDACTED} c ${REDACTED}`,
    );
    expect(r.counts().byDetector).toEqual({ 'user-pattern-1': 1, 'user-pattern-2': 1, 'user-pattern-3': 1 });
    expect(describeRedactions(r.counts())).toBe(
      '3 secrets masked (user-pattern-1 1, user-pattern-2 1, user-pattern-3 1)',
    );
    expect(redactPatternsFromEnv({ AGL_REDACT_PATTERNS: 'a{3}\n\n b[0-9]+ ' })).toEqual(['a{3}', 'b[0-9]+']);
  });

  it('a bad user pattern is a ValidationError that names it', () => {
    expect(() => createRedactor({ patterns: ['(unclosed'] })).toThrow(ValidationError);
    expect(() => createRedactor({ patterns: ['(unclosed'] })).toThrow(/redact\.patterns\[0\] "\(unclosed"/);
    expect(() => createRedactor({ patterns: ['x*'] })).toThrow(/matches the empty string/);
    expect(() => createRedactor({ env: { AGL_REDACT_PATTERNS: '[oops' } })).toThrow(/AGL_REDACT_PATTERNS/);
  });
});
