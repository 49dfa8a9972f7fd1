export { startGateway, type Gateway, type GatewayOptions } from './gateway-server';
export type { BackendConfig } from './backend-resolver';
export type { AnthropicMode, TokenIdPolicy, TrainOverrides } from './call-plan';
export type { PauseState } from './pause-controller';
export { parseGatewayPath, type GatewayApi, type GatewayPath } from './gateway-path';
export { HEADER_SEQUENCE_ID, HEADER_SPAN_ID } from './llm-call';
