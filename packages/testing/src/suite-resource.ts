import { afterAll, beforeAll } from 'vitest';
import { startOpenAiTestServer } from './openai-test-server/openai-test-server';
import type { OpenAiTestServer, OpenAiTestServerOptions } from './openai-test-server/types';

/**
 * A resource for the tests of the enclosing `describe` (a test server, a served store...): `start` runs in
 * `beforeAll`, `stop` in `afterAll`. Returns its getter, to call inside tests (it throws before `beforeAll` ran).
 */
export function useSuiteResource<T>(start: () => Promise<T>, stop: (resource: T) => Promise<void>): () => T {
  let resource: { value: T } | undefined;
  beforeAll(async () => {
    resource = { value: await start() };
  });
  afterAll(async () => {
    if (resource) await stop(resource.value);
  });
  return () => {
    if (!resource) throw new Error('useSuiteResource: the resource starts in beforeAll; read it inside a test');
    return resource.value;
  };
}

/** An {@link startOpenAiTestServer} for the tests of the enclosing `describe` (see {@link useSuiteResource}). */
export function useOpenAiTestServer(options: OpenAiTestServerOptions): () => OpenAiTestServer {
  return useSuiteResource(
    () => startOpenAiTestServer(options),
    (server) => server.close(),
  );
}
