import { AglError } from '@agl/core/errors';

/** The error and its causes (`error.cause`, at most `depth` deep). */
function causeChain(error: unknown, depth = 6): unknown[] {
  const chain: unknown[] = [];
  for (let e: unknown = error; e !== undefined && e !== null && chain.length < depth;) {
    chain.push(e);
    e = (e as { cause?: unknown }).cause;
  }
  return chain;
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * The one line `agl` prints for a failed command (after `error: `). An AGL error's message names what failed and the
 * fix. A library's error (the `openai` SDK's `Connection error.`) says less: when one of its causes is an AGL error
 * (a `providerFetch` naming the URL), that one is printed; otherwise the causes' messages follow in parentheses
 * (`Connection error. (fetch failed: connect ECONNREFUSED 127.0.0.1:9)`).
 */
export function cliErrorMessage(error: unknown): string {
  const [top, ...causes] = causeChain(error);
  if (AglError.isInstance(top)) return messageOf(top);
  const named = causes.find((c) => AglError.isInstance(c));
  if (named !== undefined) return messageOf(named);
  const details = causes.map(messageOf).filter((m) => m !== '');
  return details.length === 0 ? messageOf(top) : `${messageOf(top)} (${details.join(': ')})`;
}
