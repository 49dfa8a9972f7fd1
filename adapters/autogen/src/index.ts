/**
 * `@agl/autogen`: train Python AutoGen agents with AGL. AutoGen exports its spans over OTLP to `agl store serve`; this
 * preset turns them into transitions per agent at read time.
 */
export {
  autogenTraceAdapter,
  autogenSpanMapper,
  isAutogenLlmCall,
  type AutogenTraceAdapterOptions,
} from './autogen-trace-adapter';
