export { ChatTemplateError } from './chat-template-error';
export { ChatTokenizer } from './chat-tokenizer';
export type {
  ChatMessage,
  ChatTool,
  ChatToolCall,
  MessageSpan,
  ParsedAssistant,
  RenderedPrompt,
  RenderOptions,
  SupervisedExample,
  ToolCallFormat,
} from './chat-types';
export {
  BUILT_IN_TOKENIZERS,
  type BuiltInTokenizer,
  builtInTokenizerFor,
  loadChatTokenizer,
  tokenizerForModel,
  type TokenizerForModelOptions,
} from './model-tokenizers';
export { renderSupervisedExamples, type SupervisedOptions, supervisedFromTokenIds } from './supervised-render';
export { type LoadTokenizerFilesOptions, loadTokenizerFiles, type TokenizerFiles } from './tokenizer-files';
export { type ParseAssistantOptions, parseAglTinyToolCalls, parseAssistantOutput } from './tool-call-parser';
