import { UserError } from '@agl/core/errors';

/** Options of {@link processAgent}. */
export interface ProcessAgentOptions {
  /** Executable to run once per attempt (`python3`, `node`, `./agent.sh`). */
  command: string;
  args?: string[];
  /** Extra environment variables (merged over the runner's environment and under the AGL contract variables). */
  env?: Record<string, string>;
  cwd?: string;
  /** Lines of stderr kept for the exception span on failure (default 40). */
  stderrTailLines?: number;
  /** Seconds between SIGTERM and SIGKILL when the attempt times out or the runner stops (default 2). */
  killGraceSeconds?: number;
}

/**
 * An agent that is any command, in any language (DESIGN.md Contract 2b). The runner launches it per attempt with the
 * env contract (`AGL_TASK_INPUT`, `AGL_OPENAI_BASE_URL`, `AGL_EVENT_URL`, `AGL_KEY`, OTel variables, ...).
 */
export class ProcessAgent {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string | undefined;
  readonly stderrTailLines: number;
  readonly killGraceSeconds: number;

  constructor(options: ProcessAgentOptions) {
    if (!options || typeof options.command !== 'string' || options.command.trim() === '') {
      throw new UserError(
        'processAgent({ command }) needs a non-empty command, e.g. processAgent({ command: "python3", args: ["agent.py"] }).',
      );
    }
    this.command = options.command;
    this.args = [...(options.args ?? [])];
    this.env = { ...(options.env ?? {}) };
    this.cwd = options.cwd;
    this.stderrTailLines = options.stderrTailLines ?? 40;
    this.killGraceSeconds = options.killGraceSeconds ?? 2;
  }

  /** True for values built by {@link processAgent} (also across duplicated module copies). */
  static isInstance(value: unknown): value is ProcessAgent {
    return (
      value instanceof ProcessAgent ||
      (typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'agl.process-agent')
    );
  }

  get kind(): 'agl.process-agent' {
    return 'agl.process-agent';
  }
}

/** Run any command per rollout under the AGL env contract. */
export function processAgent(options: ProcessAgentOptions): ProcessAgent {
  return new ProcessAgent(options);
}
