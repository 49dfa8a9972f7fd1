import { exitCli } from './exit-cli';
import { runCli } from './program';

// Exit explicitly once the command is done: a server command has already drained its requests and closed its store,
// and timers left behind (an abandoned long poll) must not keep the process alive. `exitCli` first lets stdout and
// stderr drain, so output piped into another program is whole.
await exitCli(await runCli(process.argv));
