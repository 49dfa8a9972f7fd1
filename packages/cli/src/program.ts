import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { cliErrorMessage } from './cli-error-message';
import * as registry from './commands/registry';
import { processIo, type CliIo } from './commands/output';

/** A command factory as listed in `commands/registry.ts`. */
export type CommandFactory = (io: CliIo) => Command;

function configure(command: Command): void {
  command.showSuggestionAfterError(true).showHelpAfterError('(run with --help for usage)');
  command.allowExcessArguments(false);
  // Commander exits by itself after --help, --version or a usage error; it throws instead, so that every exit of the
  // CLI goes through `exitCli` (which lets stdout drain first).
  command.exitOverride();
  for (const sub of command.commands) configure(sub);
}

/** Builds the `agl` program with every registered command. */
export function createProgram(options: { io?: CliIo; version?: string } = {}): Command {
  const io = options.io ?? processIo;
  const program = new Command('agl')
    .description('AGL: train AI agents from their traces (store server, training, rollouts, spans, exports)')
    .version(options.version ?? '0.1.0')
    // An option belongs to the command it follows (`agl store --port` is `store`'s, `agl store serve --port` `serve`'s).
    .enablePositionalOptions();
  for (const factory of Object.values(registry) as CommandFactory[]) program.addCommand(factory(io));
  configure(program);
  return program;
}

/** Runs `agl` with `argv` (as `process.argv`); AGL errors print one line and set exit code 1. */
export async function runCli(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  try {
    await createProgram({ io }).parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    // Commander already printed its message (usage error) or the help text; an InvalidArgumentError that reaches here
    // was thrown by a command's action (flags checked together), which commander does not print.
    if (error instanceof CommanderError && !(error instanceof InvalidArgumentError)) return error.exitCode;
    if (error instanceof InvalidArgumentError) {
      io.err(`error: ${error.message}`);
      return error.exitCode;
    }
    io.err(`error: ${cliErrorMessage(error)}`);
    return 1;
  }
}
