/**
 * The request header that asks for resource API keys in clear: `x-agl-reveal-secrets: 1`. Without it every route that
 * answers resources masks their `api_key`. On a server with a token, only token holders reach a route at all; a browser
 * page can never send it cross-origin (CORS does not allow the header).
 */
export const REVEAL_SECRETS_HEADER = 'x-agl-reveal-secrets';
