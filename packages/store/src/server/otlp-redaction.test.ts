import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../memory/memory-store';
import { createStoreServer } from './index';

const KEY = `sk-proj-${'Zq81'.repeat(10)}`;
const AWS = `AKIA${'QWERTYUIOPASDFGH'}`;

function body(rolloutId: string, attemptId: string): string {
  const attributes = {
    'agentlightning.rollout_id': rolloutId,
    'agentlightning.attempt_id': attemptId,
    'gen_ai.prompt.0.content': `use ${KEY.slice(0, 20)}`,
    'gen_ai.prompt.1.content': `${KEY.slice(20)} now`,
    'gen_ai.completion.0.tool_calls.0.arguments': JSON.stringify({ aws: AWS }),
  };
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'deploy.password', value: { stringValue: 'hunter22' } }] },
        scopeSpans: [
          {
            spans: [
              {
                traceId: '0af7651916cd43dd8448eb211c80319c',
                spanId: 'b7ad6b7169203331',
                name: 'openai.chat.completion',
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000001000000000',
                attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
              },
            ],
          },
        ],
      },
    ],
  });
}

describe('OTLP ingest redaction (--redact-otlp)', () => {
  for (const redactOtlp of [true, false]) {
    it(`redactOtlp: ${redactOtlp} ${redactOtlp ? 'masks' : 'keeps'} secrets in span and resource attributes`, async () => {
      const store = new MemoryStore();
      const server = await createStoreServer({ store, port: 0, closeStore: true, redactOtlp });
      try {
        const r = await store.startRollout({ input: 1 });
        const response = await fetch(`${server.url}/v1/traces`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: body(r.rolloutId, r.attempt.attemptId),
        });
        expect(response.status).toBe(200);
        const stored = JSON.stringify((await store.querySpans({ rolloutId: r.rolloutId })).items);
        for (const secret of [KEY.slice(0, 20), KEY.slice(20), AWS, 'hunter22'])
          expect(stored.includes(secret)).toBe(!redactOtlp);
      } finally {
        await server.close();
      }
    });
  }
});
