import { randomBytes } from 'node:crypto';
import { UserError } from '@agl/core/errors';
import { ServiceClient } from '@agl/tinker';
import { RequestRefusedError } from '../routes/call-errors';
import { BackendEndpoint } from './backend-endpoint';
import { startTinkerUpstream, type TinkerUpstream, type TinkerUpstreamOptions } from './tinker-upstream';

/** The gateway's `tinker` option: sample through Tinker instead of forwarding to an OpenAI-compatible backend. */
export interface TinkerGatewayOptions extends Omit<TinkerUpstreamOptions, 'service' | 'log'> {
  /** A Tinker client to use (the gateway then leaves it open); default: one made from `apiKey` and `baseUrl`. */
  service?: ServiceClient;
  /** Tinker API key; default `TINKER_API_KEY`. Sent only to the Tinker base URL. */
  apiKey?: string;
  /** The Tinker service's base URL (self-hosted servers); default `TINKER_BASE_URL`, else hosted Tinker. */
  baseUrl?: string;
}

/**
 * Where an LLM resource's calls go when Tinker serves it: the Tinker upstream's endpoint, or `null` for an ordinary
 * backend. Throws a 400 for a `tinker://` model the gateway cannot sample.
 */
export type TinkerRoute = (endpoint: string, model: string, resourceName: string) => BackendEndpoint | null;

/** The route of a gateway without `--tinker`: a `tinker://` model is refused with the fix. */
export const noTinkerRoute: TinkerRoute = (_endpoint, model, name) => {
  if (!model.startsWith('tinker://')) return null;
  throw new RequestRefusedError(
    400,
    'tinker_not_enabled',
    `The LLM resource "${name}" names the Tinker sampler ${model}, and this gateway does not sample through Tinker. Start it with --tinker (startGateway tinker option).`,
  );
};

function originOf(url: string): string | null {
  try {
    return new URL(url).origin;
  } catch {
    return null;
  }
}

/** A gateway's Tinker side: the upstream it forwards to, the resource route, and its shutdown. */
export interface GatewayTinker {
  upstream: TinkerUpstream;
  endpoint: BackendEndpoint;
  /** The key the gateway sends to its upstream (as its backend key). */
  token: string;
  route: TinkerRoute;
  close(): Promise<void>;
}

/** Starts the Tinker upstream of a gateway. */
export async function startGatewayTinker(
  options: TinkerGatewayOptions,
  log: (line: string) => void,
): Promise<GatewayTinker> {
  if (options.sampler && !options.sampler.startsWith('tinker://')) {
    throw new UserError(
      `--sampler takes a tinker://…/sampler_weights/… path, got "${options.sampler}"; give a base model with --base-model.`,
    );
  }
  const owned = options.service === undefined;
  const service =
    options.service ??
    new ServiceClient({
      ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
      ...(options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }),
    });
  // A fresh secret between the gateway and its upstream: no other local process can sample on the Tinker account.
  const token = randomBytes(24).toString('hex');
  const upstream = await startTinkerUpstream({ ...options, service, log, token });
  const endpoint = BackendEndpoint.parse(upstream.baseUrl) as BackendEndpoint;
  const tinkerOrigin = originOf(upstream.tinkerBaseUrl);
  const route: TinkerRoute = (resourceEndpoint, model, name) => {
    const origin = originOf(resourceEndpoint);
    if (origin !== null && origin === tinkerOrigin) return endpoint;
    if (!model.startsWith('tinker://')) return null;
    throw new RequestRefusedError(
      400,
      'tinker_endpoint_mismatch',
      `The LLM resource "${name}" names the Tinker sampler ${model} at ${resourceEndpoint}, but this gateway samples through the Tinker service at ${upstream.tinkerBaseUrl}. Publish the resource with endpoint ${upstream.tinkerBaseUrl}, or start the gateway with TINKER_BASE_URL=${origin ?? resourceEndpoint}.`,
    );
  };
  return {
    upstream,
    endpoint,
    token,
    route,
    close: async () => {
      await upstream.close();
      if (owned) await service.close();
    },
  };
}
