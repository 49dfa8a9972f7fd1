export {
  registerAglTelemetry,
  createAglTelemetryIntegration,
  fromModelMessages,
  type AglTelemetryOptions,
} from './agl-telemetry';
export { aglMiddleware } from './agl-middleware';
