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
