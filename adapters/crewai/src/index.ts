/**
 * `@agl/crewai`: train Python CrewAI agents with AGL. CrewAI, instrumented with OpenInference, exports its spans over
 * OTLP to `agl store serve`; this preset turns them into transitions per agent (role) at read time.
 */
export {
  crewAiTraceAdapter,
  crewAiSpanMapper,
  nameCrewAiAgentSpans,
  crewAiRoleFromSpanName,
  type CrewAiTraceAdapterOptions,
} from './crewai-trace-adapter';
