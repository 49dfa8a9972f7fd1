import type { RolloutMode } from '@agl/core/schema';

/** The LLM API a request targets. */
export type GatewayApi = 'chat' | 'completion' | 'responses' | 'messages' | 'models';

/** A parsed gateway URL path. */
export interface GatewayPath {
  /** Which API. */
  api: GatewayApi;
  /**
   * The route below the backend's base URL, made of known segments: `chat/completions`, `completions`, `responses`,
   * `messages`, `models`, or `models/{id}` with the id encoded by `encodeURIComponent` (never `.` or `..`).
   */
  upstreamPath: string;
  /** Rollout id from the path, or `null` (then the `x-rollout-id` header may carry it). */
  rolloutId: string | null;
  /** Attempt id from the path, or `null`. */
  attemptId: string | null;
  /** `train`/`val` from an AGL 1.0 path; `null` otherwise (the rollout's own mode applies). */
  mode: RolloutMode;
  /** Which URL scheme matched. */
  scheme: 'agl-0.3' | 'agl-1.0' | 'plain';
}

/** A path the gateway knows but refuses, with the reason. */
export interface GatewayPathError {
  error: string;
  /** 404 for an unknown API or mode, 400 for an odd rollout, attempt or model id. */
  status: 400 | 404;
}

const AGL10 = /^\/proxy\/rollout\/([^/]+)\/attempt\/([^/]+)\/mode\/([^/]+)\/(?:openai|anthropic)\/v1\/(.+)$/;
const AGL03 = /^\/rollout\/([^/]+)\/attempt\/([^/]+)(?:\/v1)?\/(.+)$/;
const PLAIN = /^\/v1\/(.+)$/;

const SUPPORTED = 'chat/completions, completions, responses, messages, models';

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

const ROUTES: Readonly<Record<string, Exclude<GatewayApi, 'models'>>> = {
  'chat/completions': 'chat',
  completions: 'completion',
  responses: 'responses',
  messages: 'messages',
};

/** The API and upstream route of the path below `/v1/`, or `null`; a models id of `.`, `..` or control characters is an error. */
function routeOf(rest: string): { api: GatewayApi; upstreamPath: string } | { error: string } | null {
  const path = rest.endsWith('/') ? rest.slice(0, -1) : rest;
  const api = ROUTES[path];
  if (api !== undefined) return { api, upstreamPath: path };
  if (path === 'models') return { api: 'models', upstreamPath: 'models' };
  const id = /^models\/([^/]+)$/.exec(path)?.[1];
  if (id === undefined) return null;
  const model = decode(id);
  // Encoded, a slash, backslash or % is one segment's text; only a dot segment or a control character is refused.
  if (model === '.' || model === '..' || CONTROL.test(model))
    return { error: `Model id ${JSON.stringify(model)} is not a model name; ask for /v1/models/{id} with one.` };
  return { api: 'models', upstreamPath: `models/${encodeURIComponent(model)}` };
}

/**
 * Why a rollout or attempt id taken from a URL or header is refused, or `null` when it is a plain name: empty,
 * `.` or `..`, longer than 256 characters, or holding a slash, a backslash, `%`, `?`, `#` or a control character.
 */
export function idProblem(id: string): string | null {
  if (id === '' || id === '.' || id === '..') return 'is not an id';
  if (id.length > 256) return 'is longer than 256 characters';
  if (/[/\\%?#]/.test(id) || CONTROL.test(id))
    return 'holds a character ids never have (/, \\, %, ?, # or a control character)';
  return null;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Parses the three URL schemes of the gateway: AGL 0.3 `/rollout/{r}/attempt/{a}/v1/...`, AGL 1.0
 * `/proxy/rollout/{r}/attempt/{a}/mode/{train|val}/openai/v1/...` and plain `/v1/...`. Returns `null` for a path
 * that is none of them, or an error for a known scheme with an unsupported API or mode.
 */
export function parseGatewayPath(pathname: string): GatewayPath | GatewayPathError | null {
  let match = AGL10.exec(pathname);
  if (match) {
    const [, rollout, attempt, mode, rest] = match as unknown as [string, string, string, string, string];
    if (mode !== 'train' && mode !== 'val')
      return { error: `Unknown mode "${decode(mode)}" in ${pathname}; use /mode/train/ or /mode/val/.`, status: 404 };
    return withApi(rest, pathname, { rolloutId: decode(rollout), attemptId: decode(attempt), mode, scheme: 'agl-1.0' });
  }
  match = AGL03.exec(pathname);
  if (match) {
    const [, rollout, attempt, rest] = match as unknown as [string, string, string, string];
    return withApi(rest, pathname, {
      rolloutId: decode(rollout),
      attemptId: decode(attempt),
      mode: null,
      scheme: 'agl-0.3',
    });
  }
  match = PLAIN.exec(pathname);
  if (match) return withApi(match[1]!, pathname, { rolloutId: null, attemptId: null, mode: null, scheme: 'plain' });
  return null;
}

function withApi(
  rest: string,
  pathname: string,
  scope: Omit<GatewayPath, 'api' | 'upstreamPath'>,
): GatewayPath | GatewayPathError {
  for (const [what, id] of [
    ['Rollout', scope.rolloutId],
    ['Attempt', scope.attemptId],
  ] as const) {
    const problem = id === null ? null : idProblem(id);
    if (problem !== null)
      return {
        error: `${what} id ${JSON.stringify(id)} in ${pathname} ${problem}; use the base URL the runner gave this attempt.`,
        status: 400,
      };
  }
  const route = routeOf(rest);
  if (route === null)
    return { error: `Unsupported API path "${rest}" in ${pathname}; the gateway serves ${SUPPORTED}.`, status: 404 };
  if ('error' in route) return { error: route.error, status: 400 };
  return { ...route, ...scope };
}
