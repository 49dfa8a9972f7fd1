export {
  systemClock,
  type Clock,
  type LightningStore,
  type PaginatedResult,
  type PageOptions,
  type FilterLogic,
  type SortOrder,
  type QueryRolloutsOptions,
  type QuerySpansOptions,
  type QueryWorkersOptions,
  type QueryResourcesOptions,
  type RolloutUpdate,
  type AttemptUpdate,
  type AttemptRef,
  type StoreCapabilities,
  type StoreStatistics,
  type StartRolloutRequest,
} from './lightning-store';
export { applyRecords, ProductionRecord, startRequestOf, type ApplyRecordsResult } from './apply-records';
export { recordFeedback, recordRewardSpan, type FeedbackOptions } from './record-feedback';
export type { ReleaseStore, StartReleaseRequest, ServingResources } from './release-store';
