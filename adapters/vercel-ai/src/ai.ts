/**
 * `@agl/vercel-ai/ai`: the `ai` package with `generateText` and `streamText` wrapped so that a call that fails (the
 * model answers an error, a stream errors or is aborted) ends its agent, step and tool spans with the error. AI SDK 6
 * telemetry integrations get no event when a call fails. The preload (`--import @agl/vercel-ai/register`) serves this
 * module to the app's ESM `import ... from 'ai'`; with the one-line form, import `generateText` / `streamText` from
 * here instead of `ai`.
 */
import { generateText as aiGenerateText, streamText as aiStreamText } from 'ai';
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
