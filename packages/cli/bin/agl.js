#!/usr/bin/env node
// The `agl` command. This committed file is what npm links as the bin, so `npx agl` works in a fresh clone right
// after `npm ci` (npm links a bin only when its target exists at install time, before any build). It runs the build
// (dist/bin.js); where there is none (a clone installed with --ignore-scripts), it runs the TypeScript sources
// through tsx, resolving the workspace packages to their sources too (the `@agl/source` export condition).
import { existsSync } from 'node:fs';
import { register } from 'node:module';

const built = new URL('../dist/bin.js', import.meta.url);
if (existsSync(built)) {
  await import(built.href);
} else {
  const addSourceCondition =
    'export async function resolve(specifier, context, next) {' +
    ' return next(specifier, { ...context, conditions: [...context.conditions, "@agl/source"] }); }';
  register(`data:text/javascript,${encodeURIComponent(addSourceCondition)}`);
  const tsx = await import('tsx/esm/api');
  tsx.register();
  await import(new URL('../src/bin.ts', import.meta.url).href);
}
