export { startOpenAiTestServer } from './openai-test-server';
export { defaultRespond, solveArithmetic } from './default-respond';
export { toyTokenize, toyTokenId, toyPieces, toyLogprob, toyChatPromptIds } from './toy-tokenizer';
export type {
  OpenAiTestServer,
  OpenAiTestServerOptions,
  RecordedRequest,
  TestLlmApi,
  TestLlmMessage,
  TestLlmReply,
  TestLlmRequest,
  TestLlmTool,
  TestLlmToolCall,
} from './types';
