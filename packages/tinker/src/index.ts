/**
 * `@agl/tinker`: a TypeScript client of the Tinker training and sampling API, and the chat templates and tokenizers
 * that turn an agent's messages into the exact token ids a model samples and trains on.
 */
export * from './chat/index';
