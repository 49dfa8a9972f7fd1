/**
 * What "bound to loopback" means for AGL's servers (store, gateway): the address checks and the `Host` header rule that
 * stops DNS rebinding. Pure functions, shared by every server.
 * @packageDocumentation
 */

const LOOPBACK_ADDRESS = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|\[::1\]|localhost)$/i;

/** True when `host` (a bind address or a host name, IPv6 with or without brackets) names the loopback interface. */
export function isLoopbackHost(host: string): boolean {
  return LOOPBACK_ADDRESS.test(host.trim());
}

/**
 * The host part of a `Host` header, lower-cased and without its port: `localhost:4747` → `localhost`,
 * `[::1]:80` → `[::1]`. Returns `null` for an empty or malformed value.
 */
export function hostHeaderName(header: string | undefined): string | null {
  if (header === undefined) return null;
  const value = header.trim().toLowerCase();
  if (value === '') return null;
  if (value.startsWith('[')) {
    const close = value.indexOf(']');
    if (close < 0) return null;
    const rest = value.slice(close + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return value.slice(0, close + 1);
  }
  const colon = value.indexOf(':');
  if (colon < 0) return value;
  if (!/^\d{1,5}$/.test(value.slice(colon + 1))) return null;
  return value.slice(0, colon);
}

/**
 * Whether a request's `Host` header may be answered by a server bound to `bindHost`.
 *
 * A server bound to a loopback address answers only `Host` values naming loopback (`localhost`, `127.x.x.x`, `[::1]`,
 * with or without a port) or one of `allowedHosts` (host names, compared without port and case). A server bound to any
 * other address answers every `Host` (it is reachable by name anyway; protect it with a token). This is what stops a
 * web page from reading a loopback server through DNS rebinding.
 */
export function hostHeaderAllowed(
  bindHost: string,
  header: string | undefined,
  allowedHosts: readonly string[] = [],
): boolean {
  if (!isLoopbackHost(bindHost)) return true;
  const name = hostHeaderName(header);
  if (name === null) return false;
  if (isLoopbackHost(name)) return true;
  return allowedHosts.some((allowed) => (hostHeaderName(allowed) ?? '') === name);
}

/** The fix to print with a refused `Host`: names the header and the flag that allows more. */
export function hostRefusedDetail(header: string | undefined): string {
  return (
    `Host ${JSON.stringify(header ?? '')} is not allowed: this server is bound to loopback and answers only ` +
    "Host 'localhost', '127.0.0.1' or '[::1]'. Add the name with --allowed-host <name> to serve it."
  );
}
