import { describe, expect, it } from 'vitest';
import { describeTinkerServerConformance } from './describe-tinker-server-conformance';
import { startTinkerStandIn } from './tinker-stand-in';

describeTinkerServerConformance(
  'Tinker stand-in (SDK 0.25 wire: protobuf + JSON)',
  async () => {
    const server = await startTinkerStandIn({ apiKey: 'tml-stand-in' });
    return { baseUrl: server.url, apiKey: 'tml-stand-in', baseModel: 'Qwen/Qwen3-8B', close: () => server.close() };
  },
  { losses: ['importance_sampling', 'ppo', 'cispo', 'dro'] },
);

describeTinkerServerConformance('JSON-only stand-in (SkyRL-like)', async () => {
  const server = await startTinkerStandIn({ mode: 'json' });
  return { baseUrl: server.url, baseModel: 'agl/bigram-512', close: () => server.close() };
});

describe('Tinker stand-in: seq_id order and refusals', () => {
  it('runs a model’s requests in seq_id order, holding a later one until the earlier arrives; a reused seq_id is 409', async () => {
    const server = await startTinkerStandIn({ pending: [] });
    try {
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${server.url}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      const { body: session } = await post('/api/v1/create_session', {
        tags: [],
        user_metadata: null,
        sdk_version: '0.25.0',
      });
      const sessionId = session.session_id as string;
      await post('/api/v1/create_model', { session_id: sessionId, model_seq_id: 0, base_model: 'agl/bigram-512' });
      const modelId = `${sessionId}:train:0`;
      const save = await post('/api/v1/save_weights', { model_id: modelId, path: 'b', seq_id: 2 });
      const poll = () =>
        post('/api/v1/retrieve_future', { request_id: save.body.request_id, allow_metadata_only: false });
      expect((await poll()).status).toBe(408);
      const optim = await post('/api/v1/optim_step', { adam_params: {}, model_id: modelId, seq_id: 1 });
      expect(optim.status).toBe(200);
      expect(await poll()).toEqual({
        status: 200,
        body: { type: 'save_weights', path: `tinker://${modelId}/weights/b` },
      });
      const reused = await post('/api/v1/optim_step', { adam_params: {}, model_id: modelId, seq_id: 2 });
      expect(reused).toEqual({ status: 409, body: { detail: 'Training request sequence number was reused' } });
      const bad = await post('/api/v1/optim_step', {
        adam_params: { learning_rate: 'fast' },
        model_id: modelId,
        seq_id: 3,
      });
      expect(bad.status).toBe(422);
      expect(bad.body.detail).toEqual([
        { loc: ['body', 'adam_params', 'learning_rate'], msg: 'Input should be a valid number', type: 'float_type' },
      ]);
    } finally {
      await server.close();
    }
  });
});
