// Child of exit-cost.ts, run with `--import @agl/openai/register`: makes spans, then `process.exit(1)`, and prints how
// long the AGL exit hook took (from the first `exit` listener to the last).
import { writeSync } from 'node:fs';
import { getAglTracer } from '@agl/core/tracer';

let start = 0;
process.prependListener('exit', () => {
  start = performance.now();
});
process.on('exit', () => {
  writeSync(2, `EXIT_MS ${(performance.now() - start).toFixed(3)}\n`);
});
const tracer = getAglTracer().getTracer('bench');
const mode = process.argv[2];
if (mode === 'pending-cold' || mode === 'pending-warm') {
  tracer.startSpan('agent'); // left open: closed with an error at exit
  tracer.startSpan('first-call').end(); // the first span starts the exporter thread
  // An agent runs for a while before it fails (model calls, tools); 'pending-cold' crashes at once.
  if (mode === 'pending-warm') await new Promise((resolve) => setTimeout(resolve, 2_000));
  for (let i = 0; i < 19; i += 1)
    tracer.startSpan(`step-${i}`, { attributes: { 'gen_ai.prompt.0.content': 'x'.repeat(500) } }).end();
} else {
  for (let i = 0; i < 21; i += 1) tracer.startSpan(`step-${i}`).end();
  await getAglTracer().forceFlush(); // nothing left for the exit hook
}
process.exit(1);
