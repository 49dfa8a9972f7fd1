import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the built dashboard web app (`dist/app` of this package). It holds `index.html` and `assets/`;
 * pass it as `staticDir` to `createStoreServer`. Resolves the same from the sources (`src/`) and the build (`dist/`).
 */
export const dashboardAssetsDir: string = fileURLToPath(new URL('../dist/app/', import.meta.url));

/** True when the web app was built (`npm run build -w packages/dashboard`), i.e. `dashboardAssetsDir` holds `index.html`. */
export function isDashboardBuilt(): boolean {
  return existsSync(join(dashboardAssetsDir, 'index.html'));
}
