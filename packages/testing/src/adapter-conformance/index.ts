export {
  describeAdapterConformance,
  assertWeatherSpans,
  type AdapterConformanceEnv,
  type AdapterConformanceOptions,
  type AdapterConformanceTarget,
} from './describe-adapter-conformance';
export {
  WEATHER_TASK,
  weatherRespond,
  normalizeTransitions,
  expectedWeatherTransitions,
  ancestorsOf,
  type NormalizedTransition,
} from './weather-script';
export {
  failingWeatherRespond,
  assertFailingRunSpans,
  FAILING_MODEL_MESSAGE,
  scriptedWeatherRespond,
} from './failing-run';
export {
  describeFailureCases,
  FAILURE_MODES,
  FAILURE_HARNESS,
  hangingWeatherRespond,
  type FailureMode,
} from './failure-modes';
export { runNode, stableRun, SOURCE_NODE_FLAGS, type NodeRun } from './run-node';
export {
  memoryStoreServing,
  runInProduction,
  runPreloaded,
  runUntraced,
  runUntracedAndPreloaded,
  useServedStore,
  withServedStore,
  type PreloadProgram,
  type ServedStore,
  type StoreServing,
} from './preload-runs';
