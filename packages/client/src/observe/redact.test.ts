import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { afterEach, describe, expect, it } from 'vitest';
import { configureObserve, flushObserve, observe, shutdownObserve } from '../index';

const AWS_ID = `AKIA${'IOSFODNN7EXAMPLE'}`;
const PROJECT_KEY = `sk-proj-${'Q7x9'.repeat(10)}`;
const warnings: string[] = [];
const logger = { warn: (message: string) => warnings.push(message) };

function llmCall(attributes: Record<string, string>): void {
  getAglTracer()
    .getTracer('test')
    .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttributes(attributes);
      span.end();
    });
}

async function recorded(store: MemoryStore, rolloutId: string): Promise<string> {
  await flushObserve();
  const rollout = await store.getRolloutById(rolloutId);
  const spans = (await store.querySpans({ rolloutId })).items;
  return JSON.stringify({ rollout, spans });
}

describe('observe redaction', () => {
  afterEach(async () => {
    warnings.length = 0;
    delete process.env.AGL_REDACT_PATTERNS;
    await shutdownObserve(500);
  });

  it('masks secrets in rollout input and metadata, tool-call arguments, tool definitions and split prompts', async () => {
    const store = new MemoryStore();
    configureObserve({ store, logger });
    const { rolloutId } = await observe(
      { input: { question: `use ${PROJECT_KEY}`, db: 'postgres://app:s3cretPw@db/x' }, metadata: { password: 'pw1' } },
      async (rollout) => {
        llmCall({
          'gen_ai.prompt.0.content': `first half ${AWS_ID.slice(0, 9)}`,
          'gen_ai.prompt.1.content': `${AWS_ID.slice(9)} second half`,
          'gen_ai.completion.0.tool_calls.0.arguments': JSON.stringify({ token: 'ghp_' + 'a1B2'.repeat(9) }),
          'gen_ai.request.functions.0.description': 'Deploys with ANTHROPIC_API_KEY="k3y-v4lue-123456"',
        });
        return rollout;
      },
    );
    const text = await recorded(store, rolloutId);
    for (const secret of [PROJECT_KEY, 's3cretPw', 'pw1', AWS_ID.slice(0, 9), AWS_ID.slice(9), 'a1B2a1B2', 'k3y-v4lue'])
      expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED]');
    expect(text).toContain('postgres://app:[REDACTED]@db/x');
  });

  it('adds redact.patterns and AGL_REDACT_PATTERNS; a malformed variable is warned about, never thrown', async () => {
    const store = new MemoryStore();
    process.env.AGL_REDACT_PATTERNS = '["emp-[0-9]{6}"]';
    configureObserve({ store, logger, redact: { patterns: [/acct#\d{4}/] } });
    const { rolloutId } = await observe({ input: 'emp-123456 and acct#9876' }, async (rollout) => {
      llmCall({ 'gen_ai.prompt.0.content': 'emp-654321' });
      return rollout;
    });
    const text = await recorded(store, rolloutId);
    expect(text).not.toMatch(/emp-\d|acct#\d/);
    process.env.AGL_REDACT_PATTERNS = '[broken';
    configureObserve({ store, logger });
    const second = await observe({ input: `still masked ${PROJECT_KEY}` }, async (rollout) => rollout);
    expect(await recorded(store, second.rolloutId)).not.toContain(PROJECT_KEY);
    expect(warnings.join('\n')).toMatch(/AGL_REDACT_PATTERNS starts with "\[" but is not a JSON array/);
  });

  it('redact: false stores everything as it is', async () => {
    const store = new MemoryStore();
    configureObserve({ store, logger, redact: false });
    const { rolloutId } = await observe({ input: PROJECT_KEY }, async (rollout) => rollout);
    expect(await recorded(store, rolloutId)).toContain(PROJECT_KEY);
  });
});
