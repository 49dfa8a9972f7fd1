import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    index: 'src/index.ts',
    bin: 'src/bin.ts',
    'worker/model-worker': 'src/worker/model-worker.ts',
  },
});
