export { EngineStore, type EngineStoreOptions, type EngineStoreParts } from './engine-store';
export { StoreEngine, type StoreEngineOptions } from './store-engine';
export type { StoreStorage } from './storage';
export { compileFilter, sortItems, paginate, resolveSortField, type FilterSpec, type FilterField } from './filter';
