import { aglTsupConfig } from '@agl/tsup-preset';

export default aglTsupConfig({ entry: { index: 'src/index.ts' } });
