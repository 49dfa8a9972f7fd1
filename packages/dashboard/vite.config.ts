import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/** Builds the dashboard web app into dist/app (served by `agl store serve` at `/`). */
export default defineConfig({
  root: fileURLToPath(new URL('./src/app', import.meta.url)),
  base: '/',
  plugins: [react()],
  resolve: {
    conditions: ['@agl/source', 'browser', 'module', 'import', 'default'],
    // @agl/core/transitions imports node:crypto for taskIdOf, which the dashboard never calls.
    alias: { 'node:crypto': fileURLToPath(new URL('./src/app/lib/node-crypto-stub.ts', import.meta.url)) },
  },
  build: {
    outDir: fileURLToPath(new URL('./dist/app', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    chunkSizeWarningLimit: 1500,
  },
  server: { proxy: { '/v1': process.env.AGL_STORE_URL ?? 'http://127.0.0.1:4747' } },
});
