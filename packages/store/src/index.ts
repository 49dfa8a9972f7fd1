export type {
  LightningStore,
  Clock,
  PaginatedResult,
  PageOptions,
  FilterLogic,
  SortOrder,
  QueryRolloutsOptions,
  QuerySpansOptions,
  QueryWorkersOptions,
  QueryResourcesOptions,
  RolloutUpdate,
  AttemptUpdate,
  StoreCapabilities,
  StoreStatistics,
  StartRolloutRequest,
} from '@agl/core/store';
export { systemClock } from '@agl/core/store';
export { MemoryStore, type MemoryStoreOptions } from './memory/memory-store';
export { EngineStore, type EngineStoreOptions } from './engine/engine-store';
