export { FakeClock } from './fake-clock';
export { describeStoreConformance } from './store-conformance/index';
export type {
  StoreFactory,
  StoreFactoryContext,
  StoreUnderTest,
  StoreConformanceOptions,
} from './store-conformance/index';
export * from './openai-test-server/index';
export * from './fine-tuning-test-server/index';
export * from './adapter-conformance/index';
export {
  emitSpanTree,
  exportSpanTree,
  rolloutResourceAttributes,
  SpanKind,
  type FlushableTracerProvider,
  type SpanSpec,
} from './emit-span-tree';
export { roomSelectorRuleLlm } from './room-selector-rule-llm';
export { adviceCollector, between, failedRuns, ruleEdit, ruleMerge } from './apo-rule-editor';
export { isCi } from './ci-env';
export { readJsonFixture, updatingFixtures, UPDATE_FIXTURES_ENV, writeJsonFixture } from './fixture-files';
export { seedRecorded, type RecordedRollout } from './seed-recorded';
export { judgeRuleLlm, gradeByMustWords } from './judge-rule-llm';
export { postgresTestEnv, type PgProbeClient, type PostgresTestEnv } from './postgres-test-env';
export { startFineTuningServers, type FineTuningServers } from './fine-tuning-servers';
export {
  useOfflineExampleRun,
  useTempDirs,
  useTestLlmAndDir,
  type OfflineExampleSettings,
  type TestLlmAndDir,
} from './suite-fixtures';
export { runAglFromSource, trainRoomSelectorExample, type RoomSelectorTrainOptions } from './agl-from-source';
export { runOverheadBench, type OverheadBenchOptions, type OverheadSummary } from './overhead-bench';
export { startAglStoreServe, type AglStoreServe } from './agl-store-serve';
export { useOpenAiTestServer, useSuiteResource } from './suite-resource';
export { tokenTrajectory, type TokenTurn } from './token-trajectory';
export * from './tinker/index';
