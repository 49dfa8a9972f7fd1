import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    index: 'src/index.ts',
    bin: 'src/bin.ts',
    'worker/inference-worker': 'src/worker/inference-worker.ts',
    'worker/trainer-worker': 'src/worker/trainer-worker.ts',
  },
});
