import { access } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '@agl/core/errors';

/** Import a user module; `.ts`/`.mts`/`.cts` load through tsx. */
export async function loadEntryModule(entry: string): Promise<{ path: string; module: Record<string, unknown> }> {
  const path = resolve(entry);
  try {
    await access(path);
  } catch {
    throw new UserError(
      `Entry module ${path} does not exist; pass the path of a .ts or .js file that exports \`agent\`.`,
    );
  }
  if (['.ts', '.mts', '.cts', '.tsx'].includes(extname(path))) {
    const { register } = await import('tsx/esm/api');
    register();
  }
  const module = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  return { path, module };
}
