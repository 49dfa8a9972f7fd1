export { EngineStore, type EngineStoreOptions, type EngineStoreParts } from './engine-store';
export { StoreEngine, type StoreEngineOptions, type PreparedSpans } from './store-engine';
export { WRITE_LOCK_BUSY, type SerializedSpans, type StoreStorage } from './storage';
export { compileFilter, sortItems, paginate, resolveSortField, type FilterSpec, type FilterField } from './filter';
