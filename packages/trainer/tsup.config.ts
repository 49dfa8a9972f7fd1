import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    index: 'src/index.ts',
    'export/index': 'src/export/index.ts',
    'finetune/index': 'src/finetune/index.ts',
    // forked by Runner workerMode 'process'; must sit at dist/runner/worker-process-main.js
    'runner/worker-process-main': 'src/runner/worker-process-main.ts',
    // started by Runner workerMode 'thread'; must sit at dist/runner/worker-thread-main.js
    'runner/worker-thread-main': 'src/runner/worker-thread-main.ts',
  },
});
