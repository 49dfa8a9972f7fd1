/**
 * The benchmark agent as a module for `Runner` `workerMode: 'thread'` (the embedded store scenario): each runner thread
 * imports it, makes the benchmark tracer its process-wide tracer (the runner then exports the agent's spans through
 * it), and builds the agent from `AGL_BENCH_MAX_ROUNDS` and `AGL_BENCH_SLEEP_SECONDS`.
 */
import { setAglTracer } from '@agl/core/tracer';
import { createBenchTracer, makeBenchAgent } from './bench-agent';

const tracer = createBenchTracer();
setAglTracer(tracer);

export const agent = makeBenchAgent({
  maxRounds: Number(process.env.AGL_BENCH_MAX_ROUNDS),
  sleepSeconds: Number(process.env.AGL_BENCH_SLEEP_SECONDS),
  tracer,
});
