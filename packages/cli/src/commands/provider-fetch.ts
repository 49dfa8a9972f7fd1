import { ConnectionError } from '@agl/core/errors';

/** The reason a `fetch` failed before any answer: the socket error's code (`ECONNREFUSED`), else its message. */
function failureReason(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string' && cause.message !== '') return cause.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A `fetch` for a provider's SDK client (`new OpenAI({ fetch })`) whose network failures name what failed: the URL, the
 * reason and the fix, as a `ConnectionError`. The SDK wraps it into its own `Connection error.` but keeps it as the
 * cause, which `agl` prints (see `cliErrorMessage`). Aborts pass through unchanged.
 *
 * @param what - what the URL is, e.g. `the fine-tuning provider`.
 * @param fix - how to point at the right server, e.g. `check --base-url (or OPENAI_BASE_URL)`.
 */
export function providerFetch(what: string, fix: string, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    try {
      return await inner(input, init);
    } catch (error) {
      if ((error as { name?: string } | null)?.name === 'AbortError') throw error;
      const url = input instanceof Request ? input.url : String(input);
      throw new ConnectionError(
        url,
        `Cannot reach ${what} at ${new URL(url).origin} (${failureReason(error)} on ${url}): ${fix}, and that the server is up.`,
        { cause: error },
      );
    }
  };
}
