import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    'index': 'src/index.ts',
    'export/index': 'src/export/index.ts',
  },
});
