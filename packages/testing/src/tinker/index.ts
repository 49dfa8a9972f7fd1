export {
  startTinkerStandIn,
  STAND_IN_BASE_MODELS,
  type TinkerStandIn,
  type TinkerStandInOptions,
  type StandInBaseModel,
  type StandInModel,
  type StandInCheckpoint,
  type StandInSample,
  type PendingAnswer,
  type RecordedTinkerRequest,
} from './tinker-stand-in';
export { BigramModel, positionLoss, type BigramSnapshot, type LossPosition } from './bigram-model';
export {
  describeTinkerServerConformance,
  type TinkerServerUnderTest,
  type TinkerServerConformanceOptions,
} from './describe-tinker-server-conformance';
