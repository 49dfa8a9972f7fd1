export { APO, saveResult, type ApoResult } from './apo';
export { resolveApoOptions, type ApoOptions, type ApoEvent, type ResolvedApoOptions } from './apo-options';
export {
  ChatClient,
  type ChatClientOptions,
  type ChatMessage,
  type ChatUsage,
  type CompleteOptions,
} from './chat-client';
export { candidateResourcesId, type Candidate, type CandidateReport, type CandidateScore } from './candidate';
export { loadApoCandidates, type StoredCandidate } from './candidate-history';
export {
  CRITIQUE_PROMPTS,
  EDIT_PROMPTS,
  REFLECT_PROMPT,
  MERGE_PROMPT,
  loadPromptFile,
  renderPromptFile,
  formatExperiments,
  type Experiment,
  type PromptFile,
} from './prompt-files';
export { paretoFront, complementaryPair, type ScoredCandidate } from './pareto';
export { SeededRandom, batchIterator } from './seeded-random';
export type { RejectedChild } from './search-state';
export * from './judge/index';
export { optimizePrompt, type OptimizePromptOptions, type OptimizePromptSetup } from './optimize-prompt';
