import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { STORE_REOPEN, type StoreReopenSpec } from '@agl/core/tracer';
import { describe, expect, it } from 'vitest';
import { StoreClient } from './index';

describe('StoreClient reopen spec (the exit exporter thread)', () => {
  it("names @agl/client's built JavaScript, which exports StoreClient", async () => {
    const client = new StoreClient({ url: 'http://127.0.0.1:9', token: 't' });
    const spec = (client as unknown as Record<symbol, () => StoreReopenSpec>)[STORE_REOPEN]!();
    expect(spec.module).toMatch(/packages\/client\/dist\/index\.js$/);
    expect(existsSync(fileURLToPath(spec.module))).toBe(true);
    const mod = (await import(spec.module)) as Record<string, unknown>;
    expect(typeof mod[spec.exportName]).toBe('function');
    await client.close();
  });
});
