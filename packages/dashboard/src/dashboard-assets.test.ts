import { existsSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dashboardAssetsDir, isDashboardBuilt } from './index';

describe('dashboardAssetsDir', () => {
  it("is the absolute path of this package's dist/app, and isDashboardBuilt checks its index.html", () => {
    expect(dashboardAssetsDir).toBe(resolve(import.meta.dirname, '..', 'dist', 'app') + sep);
    expect(isDashboardBuilt()).toBe(existsSync(join(dashboardAssetsDir, 'index.html')));
  });
});
