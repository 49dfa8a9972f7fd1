import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    index: 'src/index.ts',
    'schema/index': 'src/schema/index.ts',
    semconv: 'src/semconv.ts',
    'seeded-random': 'src/seeded-random.ts',
    'errors/index': 'src/errors/index.ts',
    'tracer/index': 'src/tracer/index.ts',
    'tracer/llm-span': 'src/tracer/llm-span.ts',
    'transitions/index': 'src/transitions/index.ts',
    'algorithms/index': 'src/algorithms/index.ts',
    'store/index': 'src/store/index.ts',
    guards: 'src/guards.ts',
    'net/index': 'src/net/index.ts',
    'internal/json-scan': 'src/internal/json-scan.ts',
    'redact/index': 'src/redact/index.ts',
  },
});
