import type { IncomingMessage, ServerResponse } from 'node:http';
import { callOwner } from '../upstream/call-plan';
import { sendCallError } from './call-errors';
import type { GatewayPath } from './gateway-path';
import { sendJson } from './http-io';
import type { LlmCallContext } from './llm-call';

/** `GET .../v1/models[/id]`: forwarded to the call's backend (with the key the resolver chose for its origin). */
export async function handleModels(
  ctx: LlmCallContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: GatewayPath,
): Promise<void> {
  try {
    const owner = callOwner(req, path);
    const target = owner
      ? (await ctx.resolver.resolveScoped(owner.rolloutId, owner.attemptId, owner.mode)).target
      : await ctx.resolver.resolveUnscoped();
    const url = target.endpoint.url(path.upstreamPath);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (target.apiKey) headers.authorization = `Bearer ${target.apiKey}`;
    const upstream = await ctx.upstream.send({ url, method: 'GET', headers });
    const text = await ctx.upstream.readText(upstream, url);
    sendJson(res, upstream.statusCode, text, upstream.statusCode >= 400 ? { 'x-agl-error-source': 'backend' } : {});
  } catch (err) {
    sendCallError(res, err);
  }
}
