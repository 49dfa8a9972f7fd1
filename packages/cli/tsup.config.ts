import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({
  entry: {
    index: 'src/index.ts',
    bin: 'src/bin.ts',
  },
  banner: { js: '#!/usr/bin/env node' },
});
