/** `@agl/store/ops`: offline operations on a store file or database (export, import, prune, backup). */
export { exportStore, type ExportStoreOptions } from './export-store';
export { importStore, type ImportStoreOptions } from './import-store';
export { pruneStore, type PruneStoreOptions, type PruneResult } from './prune-store';
export { backupStore, type BackupStoreOptions, type BackupResult } from './backup-store';
export { isPostgresUrl } from './ops-database';
export { DUMP_FORMAT, DUMP_VERSION, type DumpCounts, type DumpLine } from './dump-format';
