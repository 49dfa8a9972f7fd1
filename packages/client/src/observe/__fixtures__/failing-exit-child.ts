// A service process for recorder-exit.test.ts that ends badly while a recorded request is in flight (store from
// AGL_STORE_URL, exit flush deadline from EXIT_MS). The request makes one LLM call, starts a second one that never
// ends, prints its rollout id, then, by argv[2]:
//   crash          a timer throws (uncaught exception)
//   exit-in-catch  the request fails; main().catch prints it and calls process.exit(1)
//   tla            the request fails under a top-level await (rejected top-level await)
//   unhandled      the request fails and nobody awaits it (unhandled rejection)
//   sigterm        waits for SIGTERM (the test sends it)
//   ends           the request ends well and the loop runs dry (beforeExit)
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { configureObserve, observe } from '../../index';

const mode = process.argv[2] ?? 'ends';
configureObserve({ exitFlushTimeoutMs: Number(process.env.EXIT_MS ?? 5_000), logger: { warn: () => undefined } });
const tracer = getAglTracer().getTracer('child');
const keepAlive = setInterval(() => undefined, 60_000);

async function request(): Promise<void> {
  await observe({ input: mode }, async (rollout) => {
    tracer.startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttribute('gen_ai.prompt.0.content', 'first call');
      span.end();
    });
    if (mode === 'ends') {
      clearInterval(keepAlive);
      console.log(rollout.rolloutId);
      return;
    }
    tracer.startSpan(SPAN_CHAT_COMPLETION).setAttribute('gen_ai.prompt.0.content', 'cut off');
    console.log(rollout.rolloutId);
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (mode === 'crash') setTimeout(() => {
      throw new Error('boom in a timer');
    });
    if (mode === 'exit-in-catch' || mode === 'tla' || mode === 'unhandled') throw new Error('the model answered 400');
    await new Promise(() => undefined);
  });
}

if (mode === 'exit-in-catch') {
  request().catch((error: unknown) => {
    console.error('request failed:', (error as Error).message);
    process.exit(1);
  });
} else if (mode === 'tla') {
  await request();
} else {
  void request();
}
