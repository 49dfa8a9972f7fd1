/**
 * Query parameters that carry credentials: dashboard links (`?token=`), API keys (`?api_key=`, `?key=`), OAuth
 * (`?access_token=`, `?client_secret=`), signatures. Compared case-insensitively, `-` and `_` alike.
 */
export const SECRET_QUERY_PARAMETERS: readonly string[] = [
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apikey',
  'key',
  'x_api_key',
  'password',
  'secret',
  'client_secret',
  'signature',
  'sig',
];

const SECRET = new Set(SECRET_QUERY_PARAMETERS);

function isSecretName(raw: string): boolean {
  let name = raw;
  try {
    name = decodeURIComponent(raw.replace(/\+/gu, ' '));
  } catch {
    // A malformed escape: judge the name as it is.
  }
  return SECRET.has(name.trim().toLowerCase().replace(/-/gu, '_'));
}

/**
 * A request URL (`/path?query`, or absolute) as it may be logged: the parameters named in
 * {@link SECRET_QUERY_PARAMETERS} are dropped from the query string, the rest is kept as sent; credentials in an
 * absolute URL's `user:password@` are dropped too.
 */
export function urlForLog(url: string): string {
  const at = url.indexOf('?');
  let path = at === -1 ? url : url.slice(0, at);
  path = path.replace(/^([A-Za-z][A-Za-z0-9+.-]*:\/\/)[^/@]*@/u, '$1');
  if (at === -1) return path;
  const hashAt = url.indexOf('#', at);
  const query = url.slice(at + 1, hashAt === -1 ? undefined : hashAt);
  const kept = query.split('&').filter((pair) => pair !== '' && !isSecretName(pair.split('=')[0]!));
  return kept.length > 0 ? `${path}?${kept.join('&')}` : path;
}
