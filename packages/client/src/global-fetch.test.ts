import { runNode, SOURCE_NODE_FLAGS } from '@agl/testing';
import { describe, expect, it } from 'vitest';

/**
 * `@agl/client` lives inside users' services: it must not change how the app's own `fetch` (and so the `openai`
 * client) sends requests. Loading the `undici` package installs its own agent as the global dispatcher of Node's
 * `fetch` when none is set; the client speaks `node:http` instead.
 */
describe('@agl/client in an app', () => {
  it("leaves Node's global fetch dispatcher as it was, loaded and talking to a store", async () => {
    const script = `
      const dispatcher = Symbol.for('undici.globalDispatcher.1');
      const { StoreClient, observe, configureObserve } = await import('@agl/client');
      const store = new StoreClient({ url: 'http://127.0.0.1:9', retryDelays: [], healthRetryDelays: [] });
      configureObserve({ store });
      await observe({ input: 'q' }, () => 'answered');
      await store.queryRollouts().catch(() => undefined);
      await store.close();
      console.log(JSON.stringify({ untouched: globalThis[dispatcher] === undefined }));`;
    const run = await runNode([...SOURCE_NODE_FLAGS, '--input-type=module', '-e', script], {});
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toEqual({ untouched: true });
  }, 60_000);
});
