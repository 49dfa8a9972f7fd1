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
