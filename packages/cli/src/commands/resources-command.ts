import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { isForbiddenKey, isRecord } from '@agl/core/guards';
import { NotFoundError, UserError, ValidationError } from '@agl/core/errors';
import { NamedResources, toWire, type ResourcesUpdate } from '@agl/core/schema';
import type { LightningStore } from '@agl/core/store';
import { maskSecrets, parseNamedResourcesBody } from '@agl/store/server';
import { isoTime, processIo, table, type CliIo } from './output';
import { storeCommand, withCliStore, type StoreFlags } from './store-options';
import {
  hasReleaseFlags,
  printCandidateRelease,
  releaseRequest,
  startCandidateRelease,
  withReleaseFlags,
  type ReleaseFlags,
} from './release-flags';

/**
 * Named resources read from a JSON file, through the same validation as `POST /v1/agl/resources`
 * (`parseNamedResourcesBody`): each value may use the wire spelling (`resource_type`, `api_key`,
 * `sampling_parameters`) or the API's (`resourceType`, ...); a name such as `__proto__` is refused, never dropped.
 * Throws `UserError` / `ValidationError` (422) naming the file and the bad field.
 */
export function parseResourcesFile(text: string, file: string): NamedResources {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UserError(`${file} is not valid JSON (${(error as Error).message}); fix the file and publish again.`);
  }
  if (!isRecord(value) || Object.keys(value).length === 0)
    throw new UserError(
      `${file} must hold a JSON object of named resources, e.g. {"main_prompt": {"resource_type": "prompt_template", "template": "..."}}.`,
    );
  try {
    return NamedResources.parse(parseNamedResourcesBody(value, { requireOne: true }));
  } catch (error) {
    if (!ValidationError.isInstance(error)) throw error;
    const issue = error.issues[0];
    const name = Object.keys(value).find((n) => issue?.path === n || issue?.path.startsWith(`${n}.`));
    const field = name === undefined || issue === undefined ? '' : issue.path.slice(name.length);
    const where = name === undefined ? '' : ` resource ${JSON.stringify(name)}${field}`;
    const hint =
      name !== undefined && isForbiddenKey(name)
        ? 'Rename it: it names an object prototype key.'
        : 'Each resource needs "resource_type" (llm, proxy_llm or prompt_template); llm needs "endpoint" and "model", prompt_template "template".';
    throw new ValidationError(`${file}:${where}: ${issue?.message ?? error.message}. ${hint}`, error.issues, {
      status: 422,
    });
  }
}

function shown(update: ResourcesUpdate): Record<string, unknown> {
  return toWire('resourcesUpdate', { ...update, resources: maskSecrets(update.resources) }) as Record<string, unknown>;
}

async function requireResources(store: LightningStore, id: string): Promise<ResourcesUpdate> {
  const update = id === 'latest' ? await store.getLatestResources() : await store.getResourcesById(id);
  if (!update)
    throw new NotFoundError(
      'resources',
      id,
      `No resources ${JSON.stringify(id)} in this store; list them with \`agl resources list\`.`,
    );
  return update;
}

/** `agl resources publish|list|show|latest`: versioned resources (prompt templates, LLM endpoints) in a store. */
export function resourcesCommand(io: CliIo = processIo): Command {
  const cmd = new Command('resources').description('publish and inspect resources (prompt templates, LLMs)');

  storeCommand(
    'publish',
    'publish a JSON file of named resources as the new latest version',
    (c) =>
      withReleaseFlags(
        c
          .argument('<file>', 'JSON object: {"name": {"resource_type": "prompt_template" | "llm" | "proxy_llm", ...}}')
          .option('--merge', "keep the latest version's other resources (the file's names replace theirs)")
          .option('--json', 'print the new version (wire format, API keys masked)')
          .option('--release', 'publish as the candidate of a release against the latest, without making it latest')
          .option('--id <resourcesId>', "with --release: the candidate's resources id (default: a new rs- id)"),
      ),
    cmd,
  ).action(
    async (
      file: string,
      flags: StoreFlags & ReleaseFlags & { merge?: boolean; json?: boolean; release?: boolean; id?: string },
    ) => {
      let text: string;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new UserError(`Cannot read ${file}: ${(error as Error).message}.`);
      }
      const resources = parseResourcesFile(text, file);
      const releaseFlags = flags.release ? releaseRequest(flags) : null;
      if (!flags.release && (flags.id !== undefined || hasReleaseFlags(flags)))
        throw new UserError(
          '--id, --shares, --metric, --guard, --min-requests, --max-duration and --baseline go with --release.',
        );
      await withCliStore(flags, async (store) => {
        const latest = flags.merge ? await store.getLatestResources() : null;
        if (releaseFlags) {
          const release = await startCandidateRelease(
            store,
            { ...(latest?.resources ?? {}), ...resources },
            flags,
            flags.id,
          );
          return printCandidateRelease(io, release, flags.json);
        }
        const update = await store.addResources({ ...(latest?.resources ?? {}), ...resources });
        if (flags.json) return io.out(JSON.stringify(shown(update), null, 2));
        io.out(update.resourcesId);
        io.err(`published ${Object.keys(update.resources).join(', ')} as ${update.resourcesId} (now the latest)`);
      });
    },
  );

  storeCommand(
    'list',
    'list resource versions, newest first',
    (c) =>
      c
        .option('--limit <n>', 'maximum rows', (v) => Number.parseInt(v, 10), 50)
        .option('--json', 'print JSON (wire format, API keys masked)'),
    cmd,
  ).action(async (flags: StoreFlags & { limit: number; json?: boolean }) => {
    await withCliStore(flags, async (store) => {
      const [page, latest] = await Promise.all([
        store.queryResources({ sortBy: 'updateTime', sortOrder: 'desc', limit: flags.limit }),
        store.getLatestResources(),
      ]);
      if (flags.json) return io.out(JSON.stringify({ items: page.items.map(shown), total: page.total }, null, 2));
      const rows = page.items.map((r) => [
        r.resourcesId === latest?.resourcesId ? `${r.resourcesId} *` : r.resourcesId,
        String(r.version),
        isoTime(r.updateTime),
        Object.keys(r.resources).join(','),
      ]);
      io.out(table(['RESOURCES', 'VERSION', 'UPDATED', 'NAMES'], rows));
      io.out(`${page.items.length} of ${page.total} versions (* latest)`);
    });
  });

  storeCommand(
    'show',
    'print one resources version (API keys masked)',
    (c) => c.argument('[resourcesId]', 'a resources id, or latest', 'latest'),
    cmd,
  ).action(async (id: string, flags: StoreFlags) => {
    await withCliStore(flags, async (store) => {
      io.out(JSON.stringify(shown(await requireResources(store, id)), null, 2));
    });
  });
  storeCommand(
    'latest',
    'print the latest resources version (API keys masked): what a rollout that names none runs with',
    (c) => c.option('--id', 'print only its resources id'),
    cmd,
  ).action(async (flags: StoreFlags & { id?: boolean }) => {
    await withCliStore(flags, async (store) => {
      const latest = await store.getLatestResources();
      if (!latest)
        throw new NotFoundError(
          'resources',
          'latest',
          'No resources published in this store yet; publish a JSON file with `agl resources publish <file>`.',
        );
      io.out(flags.id ? latest.resourcesId : JSON.stringify(shown(latest), null, 2));
    });
  });
  return cmd;
}
