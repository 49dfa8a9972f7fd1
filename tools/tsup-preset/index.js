// The one place that knows how packages are bundled: ESM only, .d.ts, sourcemaps.
// A bundler switch (tsdown) touches this file alone.
import { defineConfig } from 'tsup';

/**
 * @param {{ entry: Record<string, string> | string[], external?: string[], banner?: Record<string,string> }} options
 */
export function aglTsupConfig(options) {
  return defineConfig({
    entry: options.entry,
    format: ['esm'],
    target: 'node20',
    platform: 'node',
    dts: { compilerOptions: { customConditions: [] } },
    sourcemap: true,
    clean: true,
    splitting: true,
    treeshake: true,
    outDir: 'dist',
    tsconfig: 'tsconfig.build.json',
    external: options.external ?? [],
    banner: options.banner,
  });
}
