import { describeTinkerServerConformance } from './describe-tinker-server-conformance';
import { startTinkerStandIn } from './tinker-stand-in';

describeTinkerServerConformance('Tinker stand-in (SDK 0.25 wire: protobuf + JSON)', async () => {
  const server = await startTinkerStandIn({ apiKey: 'tml-stand-in' });
  return { baseUrl: server.url, apiKey: 'tml-stand-in', baseModel: 'Qwen/Qwen3-8B', close: () => server.close() };
}, { losses: ['importance_sampling', 'ppo', 'cispo', 'dro'] });

describeTinkerServerConformance('JSON-only stand-in (SkyRL-like)', async () => {
  const server = await startTinkerStandIn({ mode: 'json' });
  return { baseUrl: server.url, baseModel: 'agl/bigram-512', close: () => server.close() };
});
