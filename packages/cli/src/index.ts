/** `@agl/cli`: the `agl` command as a library (for tests and embedding). */
export { createProgram, runCli, type CommandFactory } from './program';
export { storeCommand, serveStore, type StoreServeFlags } from './commands/store-command';
export { processIo, type CliIo } from './commands/output';
