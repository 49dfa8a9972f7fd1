// Measures the memory the production recorder's buffer really costs against its byte bound (issue 55, item 5): fills a
// recorder whose store never answers up to `maxBufferedBytes` with realistic LLM spans (ASCII, then text with a
// character beyond Latin-1), and prints the RSS and heap growth per bounded byte.
//   node --expose-gc --conditions=@agl/source --import tsx packages/client/bench/recorder-memory-main.ts [MiB] [ascii|wide]
// (one case per process, so the RSS of one does not hide the other's)
import { Recorder } from '../src/observe/recorder';

const boundMiB = Number(process.argv[2] ?? 64);
const maxBufferedBytes = boundMiB * 1024 * 1024;
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

function measure(label: string, text: string): void {
  gc();
  const before = process.memoryUsage();
  const recorder = new Recorder({
    send: () => new Promise(() => undefined),
    maxBufferedRecords: 10_000_000,
    maxBufferedBytes,
    maxBatchRecords: 500,
    maxBatchBytes: 4 * 1024 * 1024,
    flushDelayMs: 60_000,
    minBackoffMs: 100,
    maxBackoffMs: 3_000,
    redact: null,
    logger: { warn: () => undefined },
  });
  for (let i = 0; recorder.stats().dropped === 0; i += 1) {
    const rolloutId = `ro-${label}-${i}`;
    if (
      !recorder.start({
        rolloutId,
        attemptId: `at-${i}`,
        input: { q: text.slice(0, 200) },
        metadata: { source: 'production' },
        startTime: 1_700_000_000 + i,
      })
    )
      break;
    recorder.spanSink([
      {
        rolloutId,
        attemptId: `at-${i}`,
        sequenceId: 0,
        traceId: 'a'.repeat(32),
        spanId: (i % 1e15).toString(16).padStart(16, '0'),
        parentId: null,
        name: 'openai.chat.completion',
        status: { statusCode: 'OK', description: null },
        attributes: {
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': text,
          'gen_ai.completion.0.content': text,
        },
        events: [],
        links: [],
        startTime: 1_700_000_000 + i,
        endTime: 1_700_000_001 + i,
        context: null,
        parent: null,
        resource: null,
      } as never,
    ]);
  }
  gc();
  const after = process.memoryUsage();
  const stats = recorder.stats();
  recorder.halt();
  const mib = (n: number): string => (n / 1024 / 1024).toFixed(1);
  console.log(
    `${label}: bound ${boundMiB} MiB, bufferedBytes ${mib(stats.bufferedBytes)} MiB in ${stats.buffered} records; ` +
      `RSS +${mib(after.rss - before.rss)} MiB (${((after.rss - before.rss) / stats.bufferedBytes).toFixed(2)}× the bytes counted), ` +
      `heap +${mib(after.heapUsed - before.heapUsed)} MiB (${((after.heapUsed - before.heapUsed) / stats.bufferedBytes).toFixed(2)}×)`,
  );
}

const words = 'The weather in Paris is sunny with a light breeze from the west. ';
if (process.argv[3] === 'wide') measure('text beyond Latin-1', (words + 'Température 21 °C — ☀ ').repeat(24));
else measure('ascii', words.repeat(30));
