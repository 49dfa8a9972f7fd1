export { startGateway, type Gateway, type GatewayOptions } from './server/gateway-server';
export type { BackendConfig } from './upstream/backend-resolver';
export type { TinkerGatewayOptions } from './upstream/tinker-routing';
export { startTinkerUpstream, type TinkerUpstream, type TinkerUpstreamOptions } from './upstream/tinker-upstream';
export type { AnthropicMode, TokenIdPolicy, TrainOverrides } from './upstream/call-plan';
export type { PauseState } from './server/pause-controller';
export { parseGatewayPath, type GatewayApi, type GatewayPath } from './routes/gateway-path';
export { HEADER_SEQUENCE_ID, HEADER_SPAN_ID } from './routes/llm-call';
