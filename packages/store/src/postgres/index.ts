/** `@agl/store/postgres`: the PostgreSQL backend (needs the optional peer dependency `pg`). */
export { PostgresStore, type PostgresStoreOptions } from './postgres-store';
export { PgDatabase, redactUrl, parseConnectionString, type PgConnectionOptions } from './pg-database';
export { PG_MIGRATIONS, PG_LATEST_MIGRATION, migratePg, type PgMigration } from './pg-migrations';
export { asyncOverSync, type AsyncStorageTx, type AsyncStoreDatabase, type SyncStorageExtras } from './async-storage';
