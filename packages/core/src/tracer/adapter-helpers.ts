/** Shared span-building helpers of the framework adapters (Contract 2 writers and OpenAI payload normalisers). */
export * from './llm-span';
export * from './llm-request-headers';
export * from './openai-payload';
export * from './process-rollout-env';
export * from './span-error';
