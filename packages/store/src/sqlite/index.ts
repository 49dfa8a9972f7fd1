export { SqliteStore, type SqliteStoreOptions } from './sqlite-store';
export { MIGRATIONS, LATEST_MIGRATION, type Migration } from './migrations';
