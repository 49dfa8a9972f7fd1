export {
  instrumentOpenAI,
  instrumentOpenAIClass,
  wrapCreate,
  patchCreate,
  type InstrumentOpenAIOptions,
  type OpenAiApiKind,
  type OpenAILikeClient,
  type OpenAILikeClass,
} from './instrument-openai';
export { ChatChunkAccumulator, ResponsesEventAccumulator } from './stream-accumulator';
