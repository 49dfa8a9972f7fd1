import { join, resolve } from 'node:path';
import { runNode, SOURCE_NODE_FLAGS, type NodeRun } from './adapter-conformance/run-node';

/** The monorepo root (the same from `src/` and from `dist/`). */
const REPO_ROOT = resolve(import.meta.dirname, '../../..');

/**
 * Runs the `agl` CLI from the workspace sources (`packages/cli/src/bin.ts`) in the monorepo root, so relative paths in
 * `args` are relative to the root; `env` is added to this process's environment.
 */
export function runAglFromSource(args: string[], env: NodeJS.ProcessEnv = {}): Promise<NodeRun> {
  return runNode([...SOURCE_NODE_FLAGS, 'packages/cli/src/bin.ts', ...args], env, REPO_ROOT);
}

/** Options of {@link trainRoomSelectorExample}. */
export interface RoomSelectorTrainOptions {
  /** Base URL (with `/v1`) of a test server that answers with `roomSelectorRuleLlm`. */
  baseURL: string;
  /** Folder for the SQLite store (`store.sqlite`) and the best prompt (`best.txt`). */
  dir: string;
  /** Sent as OPENAI_API_KEY (default `test`). */
  apiKey?: string;
  /** More `agl train` flags (e.g. `--release`). */
  args?: string[];
}

/**
 * `agl train examples/apo-room-selector/src/train-entry.ts --algorithm apo --store <dir>/store.sqlite --no-progress`
 * against the rule-based test server, with the models `roomSelectorRuleLlm` plays and no store server: the CLI path of
 * the example, and a real APO run for tests that read its store.
 */
export function trainRoomSelectorExample(o: RoomSelectorTrainOptions): Promise<NodeRun> {
  const entry = 'examples/apo-room-selector/src/train-entry.ts';
  return runAglFromSource(
    ['train', entry, '--algorithm', 'apo', '--store', join(o.dir, 'store.sqlite'), '--no-progress', ...(o.args ?? [])],
    {
      CI: '1',
      OPENAI_BASE_URL: o.baseURL,
      OPENAI_API_KEY: o.apiKey ?? 'test',
      APO_AGENT_MODEL: 'agent-model',
      APO_GRADIENT_MODEL: 'critic-model',
      APO_EDIT_MODEL: 'editor-model',
      AGL_STORE_URL: '',
      AGL_STORE_TOKEN: '',
      APO_OUTPUT: join(o.dir, 'best.txt'),
    },
  );
}
