import { runCli } from './program';

// Exit explicitly once the command is done: a server command has already drained its requests and closed its store,
// and timers left behind (an abandoned long poll) must not keep the process alive.
process.exit(await runCli(process.argv));
