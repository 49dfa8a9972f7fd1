import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeTinkerServerConformance } from '@agl/testing';
import { TEST_CONFIG } from '../__fixtures__/tool-model';
import { startTinyServer } from '../server/tiny-server';

const serve = (wire: 'protobuf' | 'json') => async () => {
  const dir = await mkdtemp(join(tmpdir(), `tiny-tinker-conformance-${wire}-`));
  const server = await startTinyServer({
    weightsDir: dir,
    init: { config: TEST_CONFIG, seed: 11 },
    tinker: true,
    token: 'tml-tiny-conformance',
    tinkerLongPollMs: 200,
  });
  return {
    baseUrl: server.tinkerUrl!,
    apiKey: 'tml-tiny-conformance',
    baseModel: 'agl-tiny',
    close: async () => {
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
};

// The same client cases the Tinker stand-in passes (packages/testing/src/tinker), against the embedded policy.
describeTinkerServerConformance('the embedded policy (protobuf wire)', serve('protobuf'), {
  losses: ['importance_sampling', 'ppo'],
  learningRate: 0.01,
});
describeTinkerServerConformance('the embedded policy (JSON wire)', serve('json'), {
  losses: ['importance_sampling', 'ppo'],
  learningRate: 0.01,
  client: { forwardBackwardWire: 'json' },
});
