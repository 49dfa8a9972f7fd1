/**
 * `@agl/vercel-ai/ai`: the `ai` package with `generateText`, `streamText` and `ToolLoopAgent` (`generate`, `stream`)
 * wrapped so that a call that fails (the
 * model answers an error, a stream errors or is aborted) ends its agent, step and tool spans with the error. AI SDK 6
 * telemetry integrations get no event when a call fails. The preload (`--import @agl/vercel-ai/register`) serves this
 * module to the app's ESM `import ... from 'ai'`; with the one-line form, import `generateText` / `streamText` from
 * here instead of `ai`.
 */
import { generateText as aiGenerateText, streamText as aiStreamText, ToolLoopAgent as AiToolLoopAgent } from 'ai';
import { failCall, withCallFrame } from './agl-telemetry';

export * from 'ai';

/** `ai`'s `generateText`; a call that throws ends its AGL spans with the error. */
export const generateText = ((options: Parameters<typeof aiGenerateText>[0]) =>
  withCallFrame(async (frame) => {
    try {
      return await aiGenerateText(options);
    } catch (err) {
      failCall(frame, err);
      throw err;
    }
  })) as typeof aiGenerateText;

/**
 * `ai`'s `streamText`; a stream that errors or is aborted ends its AGL spans with the error. The app's `onError` /
 * `onAbort` still run (with no `onError`, the error is logged with `console.error`, as `ai` does).
 */
export const streamText = ((options: Parameters<typeof aiStreamText>[0]) =>
  withCallFrame((frame) =>
    aiStreamText({
      ...options,
      onError: (event) => {
        failCall(frame, event.error);
        if (options.onError) return options.onError(event);
        // The SDK default when the app passes no onError.
        // eslint-disable-next-line no-console
        console.error(event.error);
      },
      onAbort: (event) => {
        failCall(frame, new Error('The streamText call was aborted.'));
        return options.onAbort?.(event);
      },
    }),
  )) as typeof aiStreamText;

type StreamOptions = { onError?: (event: { error: unknown }) => unknown; onAbort?: (event: never) => unknown };

/** `options` with `onError` / `onAbort` ending the call's spans first (the app's own handlers, or `ai`'s default, after). */
function failingStreamOptions<T extends StreamOptions>(frame: Parameters<typeof failCall>[0], options: T): T {
  return {
    ...options,
    onError: (event: { error: unknown }) => {
      failCall(frame, event.error);
      if (options.onError) return options.onError(event);
      // eslint-disable-next-line no-console
      console.error(event.error);
    },
    onAbort: (event: never) => {
      failCall(frame, new Error('The stream was aborted.'));
      return options.onAbort?.(event);
    },
  };
}

/**
 * `ai`'s `ToolLoopAgent`: `generate` and `stream` run `ai`'s own `generateText` /
 * `streamText`, not the wrapped ones, so they end their spans with the error themselves when the call fails. The
 * class keeps its name and is a subclass, so `instanceof ToolLoopAgent` holds for agents made from either.
 */
class AglToolLoopAgent extends (AiToolLoopAgent as unknown as new (settings: unknown) => {
  generate(options: unknown): Promise<unknown>;
  stream(options: unknown): Promise<unknown>;
}) {
  override generate(options: unknown): Promise<unknown> {
    return withCallFrame(async (frame) => {
      try {
        return await super.generate(options);
      } catch (err) {
        failCall(frame, err);
        throw err;
      }
    });
  }

  override stream(options: unknown): Promise<unknown> {
    return withCallFrame((frame) => super.stream(failingStreamOptions(frame, (options ?? {}) as StreamOptions)));
  }
}
Object.defineProperty(AglToolLoopAgent, 'name', { value: AiToolLoopAgent.name });

export const ToolLoopAgent = AglToolLoopAgent as unknown as typeof AiToolLoopAgent;
