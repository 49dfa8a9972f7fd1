export { rolloutTranscript } from './transcript';
export { FileJudgeCache, MemoryJudgeCache, judgeCacheKey, type JudgeCache, type JudgeScore } from './judge-cache';
export { LlmJudge, JudgeAnswerError, rubricHash, type LlmJudgeOptions, type JudgeResult } from './llm-judge';
export { rubricReward, groupRewards, judgeRewardHook, type JudgedConversation } from './judge-rewards';
export { judgeStore, judgeSpanAttributes, type JudgeStoreOptions, type JudgeStoreReport } from './judge-store';
export { judgeAgreement, type JudgeAgreementOptions, type JudgeAgreementReport } from './judge-agreement';
export { spearmanRho } from './spearman';
