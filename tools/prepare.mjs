// The root `prepare` script: `npm ci` and `npm install` run it after installing. It builds the JavaScript of every
// workspace package that has a `build` script (tsup without .d.ts files, a second or two each) and the dashboard web
// app (vite), so a fresh clone runs `npx agl …`, serves the dashboard with `agl store serve` and runs scripts that
// import `@agl/*` with no other step. `npm run build` is the full build (types included) through Nx.
// AGL_SKIP_PREPARE=1 skips it.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
if (process.env.AGL_SKIP_PREPARE === '1') process.exit(0);

const started = Date.now();
const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` };
const { workspaces } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const built = [];
for (const glob of workspaces) {
  const parent = join(root, glob.replace(/\/\*$/u, ''));
  if (!existsSync(parent)) continue;
  for (const name of readdirSync(parent).sort()) {
    const dir = join(parent, name);
    const manifestPath = join(dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const build = manifest.scripts?.build;
    if (typeof build !== 'string') continue;
    // `tsup && vite build` → `tsup --no-dts && vite build`: the same outputs but the type declarations.
    const command = build
      .split('&&')
      .map((step) => (step.trim().startsWith('tsup') ? `${step.trim()} --no-dts` : step.trim()))
      .join(' && ');
    const result = spawnSync(command, { cwd: dir, env, shell: true, encoding: 'utf8' });
    if (result.status !== 0) {
      process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
      process.stderr.write(
        `prepare: \`${command}\` failed in ${dir} (exit ${result.status}); \`npm run build\` shows the full error.\n`,
      );
      process.exit(1);
    }
    built.push(manifest.name);
  }
}
console.log(
  `prepare: built the JavaScript of ${built.length} packages and the dashboard in ${((Date.now() - started) / 1000).toFixed(1)}s (npm run build adds the type declarations).`,
);
