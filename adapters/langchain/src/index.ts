export {
  AglCallbackHandler,
  fromLangChainMessage,
  fromLangChainResult,
  type AglCallbackHandlerOptions,
} from './agl-callback-handler';
export { installAglLangChain, AGL_LANGCHAIN_CONTEXT_VAR } from './install';
