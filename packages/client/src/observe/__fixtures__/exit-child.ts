// A service process for exit-flush.test.ts: records one request (store from AGL_STORE_URL), then either lets the
// loop run dry (`beforeExit`) or waits for SIGTERM.
import { SPAN_CHAT_COMPLETION } from '@agl/core/semconv';
import { getAglTracer } from '@agl/core/tracer';
import { observe } from '../../index';

const mode = process.argv[2] ?? 'beforeExit';
const rolloutId = await observe({ input: mode }, async (rollout) => {
  getAglTracer()
    .getTracer('child')
    .startActiveSpan(SPAN_CHAT_COMPLETION, (span) => {
      span.setAttribute('gen_ai.prompt.0.content', `exit-${mode}`);
      span.end();
    });
  return rollout.rolloutId;
});
console.log(rolloutId);
if (mode === 'sigterm') setInterval(() => undefined, 60_000);
