import { describe, expect, it } from 'vitest';
import { parseGatewayPath } from './gateway-path';

describe('parseGatewayPath', () => {
  it('parses the AGL 0.3, AGL 1.0 and plain schemes', () => {
    expect(parseGatewayPath('/rollout/ro-1/attempt/at-2/v1/chat/completions')).toEqual({
      api: 'chat',
      upstreamPath: 'chat/completions',
      rolloutId: 'ro-1',
      attemptId: 'at-2',
      mode: null,
      scheme: 'agl-0.3',
    });
    expect(parseGatewayPath('/rollout/ro%201/attempt/a/messages')).toMatchObject({
      api: 'messages',
      rolloutId: 'ro 1',
    });
    expect(parseGatewayPath('/proxy/rollout/r/attempt/a/mode/val/openai/v1/completions')).toMatchObject({
      api: 'completion',
      mode: 'val',
      scheme: 'agl-1.0',
    });
    expect(parseGatewayPath('/v1/models/test-model')).toMatchObject({
      api: 'models',
      upstreamPath: 'models/test-model',
      rolloutId: null,
      scheme: 'plain',
    });
    expect(parseGatewayPath('/v1/responses')).toMatchObject({ api: 'responses' });
  });

  it('names unsupported APIs and modes, and ignores foreign paths', () => {
    expect(parseGatewayPath('/v1/embeddings')).toEqual({
      error: expect.stringContaining('chat/completions, completions, responses, messages, models'),
      status: 404,
    });
    expect(parseGatewayPath('/proxy/rollout/r/attempt/a/mode/test/openai/v1/chat/completions')).toEqual({
      error: expect.stringContaining('/mode/train/'),
      status: 404,
    });
    expect(parseGatewayPath('/api/rollouts')).toBeNull();
  });
});
