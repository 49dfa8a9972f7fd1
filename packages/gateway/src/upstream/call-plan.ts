import type { IncomingMessage } from 'node:http';
import { ValidationError } from '@agl/core/errors';
import { isRecord, type JsonRecord } from '@agl/core/guards';
import type { RolloutMode } from '@agl/core/schema';
import { HEADER_ATTEMPT_ID, HEADER_ROLLOUT_ID } from '@agl/core/semconv';
import { type GatewayApi, type GatewayPath, idProblem } from '../routes/gateway-path';
import { anthropicRequestToChat } from '../translation/anthropic-translation';
import type { BackendResolver, ResolvedScope, ResolvedTarget } from './backend-resolver';
import { type PreparedBody, prepareUpstreamBody } from './upstream-body';

/** When the gateway asks the backend for token ids: on training calls, on every rollout-scoped call, or never. */
export type TokenIdPolicy = 'train' | 'scoped' | 'never';

/** How Anthropic `/v1/messages` calls reach the backend. */
export type AnthropicMode = 'auto' | 'passthrough' | 'translate';

/** Model and sampling overrides for training calls, set by the trainer. */
export interface TrainOverrides {
  model?: string | null;
  sampling?: Record<string, unknown>;
}

/** How one LLM call is handled: which wire format the backend gets and the client gets back. */
export type CallKind = 'chat' | 'completion' | 'responses' | 'anthropic-passthrough' | 'anthropic-translate';

/** Everything decided before the backend is called. */
export interface CallPlan {
  kind: CallKind;
  scope: ResolvedScope | null;
  target: ResolvedTarget;
  prepared: PreparedBody;
  url: URL;
  stream: boolean;
}

/** Most messages (or `input` items) one call may carry; far beyond any real conversation. */
export const MAX_MESSAGES = 20_000;

const bad = (field: string, message: string): ValidationError =>
  new ValidationError(message, [{ path: field, message }], { status: 400 });

function checkMessages(body: JsonRecord, field: string, roles: readonly string[] | null): void {
  if (!Array.isArray(body[field]) || (body[field] as unknown[]).length === 0) {
    throw bad(
      field,
      `"${field}" must be a non-empty array of {role, content} objects; got ${JSON.stringify(body[field]) ?? 'nothing'}.`,
    );
  }
  checkCount(body, field);
  (body[field] as unknown[]).forEach((m, i) => {
    if (!isRecord(m) || typeof m.role !== 'string')
      throw bad(`${field}.${i}.role`, `"${field}[${i}].role" must be a string (for example "user").`);
    if (roles && !roles.includes(m.role))
      throw bad(
        `${field}.${i}.role`,
        `"${field}[${i}].role" is "${m.role}"; Anthropic messages take ${roles.join(' or ')} (put the system prompt in "system").`,
      );
  });
}

function checkCount(body: JsonRecord, field: string): void {
  const items = body[field];
  if (Array.isArray(items) && items.length > MAX_MESSAGES)
    throw bad(field, `"${field}" has ${items.length} items; the gateway takes at most ${MAX_MESSAGES} per call.`);
}

/** Checks the fields the gateway relies on; throws a 400 `ValidationError` naming the field and the fix. */
export function validateBody(api: GatewayApi, body: JsonRecord): void {
  if (body.stream !== undefined && typeof body.stream !== 'boolean')
    throw bad('stream', `"stream" must be true or false, got ${JSON.stringify(body.stream)}.`);
  if (body.model !== undefined && typeof body.model !== 'string')
    throw bad('model', `"model" must be a string, got ${JSON.stringify(body.model)}.`);
  if (api === 'chat') checkMessages(body, 'messages', null);
  else if (api === 'messages') checkMessages(body, 'messages', ['user', 'assistant']);
  else if (api === 'completion' && (body.prompt === undefined || body.prompt === null))
    throw bad('prompt', '"prompt" is required for /completions (a string, a list of strings or token ids).');
  else if (api === 'responses') {
    if (typeof body.input !== 'string' && !Array.isArray(body.input))
      throw bad('input', '"input" is required for /responses (a string or a list of input items).');
    checkCount(body, 'input');
  }
}

function header(req: IncomingMessage, name: string): string | null {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text && text.trim() !== '' ? text.trim() : null;
}

/** The rollout and attempt of a call: from the path, else from `x-rollout-id` / `x-attempt-id`. */
export function callOwner(
  req: IncomingMessage,
  path: GatewayPath,
): { rolloutId: string; attemptId: string; mode: RolloutMode } | null {
  if (path.rolloutId !== null && path.attemptId !== null)
    return { rolloutId: path.rolloutId, attemptId: path.attemptId, mode: path.mode };
  const rolloutId = header(req, HEADER_ROLLOUT_ID);
  const attemptId = header(req, HEADER_ATTEMPT_ID);
  if (rolloutId === null && attemptId === null) return null;
  if (rolloutId === null || attemptId === null) {
    throw bad(
      rolloutId === null ? HEADER_ROLLOUT_ID : HEADER_ATTEMPT_ID,
      `Send both ${HEADER_ROLLOUT_ID} and ${HEADER_ATTEMPT_ID} headers (or neither); only one was given.`,
    );
  }
  for (const [name, id] of [
    [HEADER_ROLLOUT_ID, rolloutId],
    [HEADER_ATTEMPT_ID, attemptId],
  ] as const) {
    const problem = idProblem(id);
    if (problem !== null)
      throw bad(name, `Header ${name} ${JSON.stringify(id)} ${problem}; send the ids the runner gave this attempt.`);
  }
  return { rolloutId, attemptId, mode: null };
}

/** Inputs of {@link planCall}. */
export interface PlanCallOptions {
  req: IncomingMessage;
  path: GatewayPath;
  body: JsonRecord;
  resolver: BackendResolver;
  tokenIds: TokenIdPolicy;
  anthropic: AnthropicMode;
  trainOverrides: TrainOverrides;
  /** Backends known not to serve `/messages` (auto mode falls back to translation). */
  noAnthropic: ReadonlySet<string>;
  /** Force translation (after a passthrough attempt got 404). */
  forceTranslate?: boolean;
}

/** Decides routing, overrides, token-id collection and the wire format of one call. */
export async function planCall(o: PlanCallOptions): Promise<CallPlan> {
  const owner = callOwner(o.req, o.path);
  const scope = owner ? await o.resolver.resolveScoped(owner.rolloutId, owner.attemptId, owner.mode) : null;
  const target = scope ? scope.target : await o.resolver.resolveUnscoped();
  const train = scope?.mode === 'train';
  const collectTokenIds = scope !== null && (o.tokenIds === 'scoped' || (o.tokenIds === 'train' && train));
  const model = (train ? o.trainOverrides.model : null) ?? target.model;
  const sampling = train ? { ...target.sampling, ...(o.trainOverrides.sampling ?? {}) } : {};
  let kind: CallKind;
  if (o.path.api === 'messages') {
    const translate =
      o.forceTranslate === true ||
      o.anthropic === 'translate' ||
      (o.anthropic === 'auto' && (collectTokenIds || o.noAnthropic.has(target.endpoint.href)));
    kind = translate ? 'anthropic-translate' : 'anthropic-passthrough';
  } else kind = o.path.api === 'chat' ? 'chat' : o.path.api === 'completion' ? 'completion' : 'responses';
  const source = kind === 'anthropic-translate' ? anthropicRequestToChat(o.body) : o.body;
  const bodyApi = kind === 'anthropic-translate' ? 'chat' : kind === 'anthropic-passthrough' ? 'messages' : kind;
  const prepared = prepareUpstreamBody(bodyApi, source, { model, sampling, collectTokenIds }, scope !== null);
  const upstreamPath = kind === 'anthropic-translate' ? 'chat/completions' : o.path.upstreamPath;
  return {
    kind,
    scope,
    target,
    prepared,
    url: target.endpoint.url(upstreamPath),
    stream: prepared.body.stream === true,
  };
}

const FORWARDED = [
  'anthropic-version',
  'anthropic-beta',
  'traceparent',
  'tracestate',
  'openai-organization',
  'openai-project',
  'user-agent',
];

/** Upstream headers: the configured backend key (never the client's credentials) and a few safe client headers. */
export function upstreamHeaders(req: IncomingMessage, plan: CallPlan): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: plan.stream ? 'text/event-stream' : 'application/json',
  };
  for (const name of FORWARDED) {
    const value = header(req, name);
    if (value !== null) headers[name] = value;
  }
  if (plan.kind === 'anthropic-passthrough' && headers['anthropic-version'] === undefined)
    headers['anthropic-version'] = '2023-06-01';
  if (plan.target.apiKey) {
    headers.authorization = `Bearer ${plan.target.apiKey}`;
    if (plan.kind === 'anthropic-passthrough') headers['x-api-key'] = plan.target.apiKey;
  }
  return headers;
}
