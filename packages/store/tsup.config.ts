import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    'index': 'src/index.ts',
    'sqlite/index': 'src/sqlite/index.ts',
    'server/index': 'src/server/index.ts',
    'client/index': 'src/client/index.ts',
  },
});
