import { aglTsupConfig } from '@agl/tsup-preset';

// The Node entry (`dashboardAssetsDir`) only; `vite build` writes the web app to dist/app afterwards.
export default aglTsupConfig({ entry: { index: 'src/index.ts' } });
