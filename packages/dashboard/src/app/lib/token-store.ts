/** sessionStorage key of the store token: entered once per browser tab session. */
export const TOKEN_KEY = 'agl.dashboard.token';

/** The saved token, or `null`. */
export function loadToken(): string | null {
  try {
    return window.sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

/** Saves (or with `null`, forgets) the token for this tab session. */
export function saveToken(token: string | null): void {
  try {
    if (token === null) window.sessionStorage.removeItem(TOKEN_KEY);
    else window.sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // Storage may be disabled; the token then lasts until reload.
  }
}

/** The URL parameter that may carry the token once: `http://host:4747/?token=...` (a link printed for a user). */
export const TOKEN_PARAM = 'token';

/**
 * Takes a token given in the page URL (`?token=...`): saves it as {@link saveToken} does, removes it from the address
 * bar and history (`history.replaceState`, so it is not bookmarked, shared or kept in the back stack) and returns it;
 * `null` when the URL has none.
 */
export function takeTokenFromUrl(): string | null {
  const url = new URL(window.location.href);
  const token = url.searchParams.get(TOKEN_PARAM);
  if (token === null) return null;
  url.searchParams.delete(TOKEN_PARAM);
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  if (token.trim() === '') return null;
  saveToken(token.trim());
  return token.trim();
}
