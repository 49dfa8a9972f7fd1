import type { RolloutMode } from '@agl/core/schema';

/** The LLM API a request targets. */
export type GatewayApi = 'chat' | 'completion' | 'responses' | 'messages' | 'models';

/** A parsed gateway URL path. */
export interface GatewayPath {
  /** Which API. */
  api: GatewayApi;
  /** The path below the backend's base URL, e.g. `chat/completions` or `models/foo`. */
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
}

const AGL10 = /^\/proxy\/rollout\/([^/]+)\/attempt\/([^/]+)\/mode\/([^/]+)\/(?:openai|anthropic)\/v1\/(.+)$/;
const AGL03 = /^\/rollout\/([^/]+)\/attempt\/([^/]+)(?:\/v1)?\/(.+)$/;
const PLAIN = /^\/v1\/(.+)$/;

const SUPPORTED = 'chat/completions, completions, responses, messages, models';

function apiOf(rest: string): GatewayApi | null {
  const path = rest.endsWith('/') ? rest.slice(0, -1) : rest;
  if (path === 'chat/completions') return 'chat';
  if (path === 'completions') return 'completion';
  if (path === 'responses') return 'responses';
  if (path === 'messages') return 'messages';
  if (path === 'models' || /^models\/[^/]+$/.test(path)) return 'models';
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
    if (mode !== 'train' && mode !== 'val') return { error: `Unknown mode "${decode(mode)}" in ${pathname}; use /mode/train/ or /mode/val/.` };
    return withApi(rest, pathname, { rolloutId: decode(rollout), attemptId: decode(attempt), mode, scheme: 'agl-1.0' });
  }
  match = AGL03.exec(pathname);
  if (match) {
    const [, rollout, attempt, rest] = match as unknown as [string, string, string, string];
    return withApi(rest, pathname, { rolloutId: decode(rollout), attemptId: decode(attempt), mode: null, scheme: 'agl-0.3' });
  }
  match = PLAIN.exec(pathname);
  if (match) return withApi(match[1]!, pathname, { rolloutId: null, attemptId: null, mode: null, scheme: 'plain' });
  return null;
}

function withApi(rest: string, pathname: string, scope: Omit<GatewayPath, 'api' | 'upstreamPath'>): GatewayPath | GatewayPathError {
  const api = apiOf(rest);
  if (api === null) return { error: `Unsupported API path "${rest}" in ${pathname}; the gateway serves ${SUPPORTED}.` };
  return { api, upstreamPath: rest.endsWith('/') ? rest.slice(0, -1) : rest, ...scope };
}
