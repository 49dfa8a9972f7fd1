/**
 * `@agl/vercel-ai/ai`: the `ai` package with `generateText`, `streamText` and `ToolLoopAgent` (`generate`, `stream`)
 * wrapped so that a call that fails (the model answers an error, a stream errors or is aborted) ends its agent, step
 * and tool spans with the error. AI SDK 6
 * telemetry integrations get no event when a call fails. The preload (`--import @agl/vercel-ai/register`) serves this
 * module to the app's ESM `import ... from 'ai'`; with the one-line form, import `generateText` / `streamText` from
 * here instead of `ai`.
 */
import { generateText as aiGenerateText, streamText as aiStreamText, ToolLoopAgent as AiToolLoopAgent } from 'ai';
import { failCall, withCallFrame, type CallFrame } from './agl-telemetry';

export * from 'ai';

interface StreamOptions {
  onError?: (event: { error: unknown }) => unknown;
  onAbort?: (event: never) => unknown;
}

/**
 * `options` with `onError` / `onAbort` ending the call's spans first; the app's own handlers run after (with no
 * `onError`, the error is logged with `console.error`, as `ai` does).
 */
function failingStreamOptions<T extends object>(frame: CallFrame, options: T, abortMessage: string): T {
  const own = options as StreamOptions;
  return {
    ...options,
    onError: (event: { error: unknown }): unknown => {
      failCall(frame, event.error);
      if (own.onError) return own.onError(event);
      // The SDK default when the app passes no onError.
      // eslint-disable-next-line no-console
      console.error(event.error);
      return undefined;
    },
    onAbort: (event: never): unknown => {
      failCall(frame, new Error(abortMessage));
      return own.onAbort?.(event);
    },
  };
}

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
    aiStreamText(failingStreamOptions(frame, options, 'The streamText call was aborted.')),
  )) as typeof aiStreamText;

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
    return withCallFrame((frame) =>
      super.stream(failingStreamOptions(frame, (options ?? {}) as object, 'The ToolLoopAgent stream was aborted.')),
    );
  }
}
Object.defineProperty(AglToolLoopAgent, 'name', { value: AiToolLoopAgent.name });

export const ToolLoopAgent = AglToolLoopAgent as unknown as typeof AiToolLoopAgent;
