// Preload of the observe bench's peer variant (`node --import ./observe-otel-preload.mjs`): the standard OpenTelemetry
// stack a team would run instead of AGL to record an LLM service with its prompts. `@opentelemetry/sdk-node` with
// `@opentelemetry/instrumentation-http` (a server span per request) and Traceloop's openai instrumentation with
// `traceContent: true` (a span per chat completion holding the prompt and completion messages as attributes), exported
// by the OTLP/HTTP exporter through a BatchSpanProcessor (the SDK's defaults) to `BENCH_OTLP_URL`, a sink process that
// accepts and discards OTLP. `globalThis.__benchFlush()` exports what is queued (the bench's `/flush`).
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OpenAIInstrumentation } from '@traceloop/instrumentation-openai';

const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: `${process.env.BENCH_OTLP_URL}/v1/traces` }));
const openaiInstrumentation = new OpenAIInstrumentation({ traceContent: true });
const sdk = new NodeSDK({
  serviceName: 'bench-support',
  spanProcessors: [processor],
  instrumentations: [new HttpInstrumentation(), openaiInstrumentation],
});
sdk.start();
// The service imports `openai` as ESM, which the SDK's require hooks do not see: the ESM copy (the one the service gets,
// resolved from the same folder) is instrumented by hand, as Traceloop documents for ESM and bundled apps.
const { default: OpenAI } = await import('openai');
openaiInstrumentation.manuallyInstrument(OpenAI);
globalThis.__benchFlush = () => processor.forceFlush();
process.once('SIGTERM', () => {
  void sdk.shutdown().finally(() => process.exit(0));
});
