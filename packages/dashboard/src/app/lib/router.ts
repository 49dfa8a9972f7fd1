import { useEffect, useState } from 'react';

/** The current path and query of the page. */
export interface Location {
  path: string;
  query: URLSearchParams;
}

const listeners = new Set<() => void>();

function read(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

/** Goes to `to` (a path with optional query) without reloading the page. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  for (const listener of listeners) listener();
}

/** The current location; re-renders on navigation and on back/forward. */
export function useLocation(): Location {
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const update = () => setLocation(read());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return location;
}

/** Matches `/rollouts/:id` style patterns; returns the decoded params or `null`. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/').filter(Boolean);
  const s = path.split('/').filter(Boolean);
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i += 1) {
    const part = p[i] as string;
    const optional = part.endsWith('?');
    const name = part.replace(/^:/, '').replace(/\?$/, '');
    const value = s[i];
    if (value === undefined) {
      if (optional) continue;
      return null;
    }
    if (part.startsWith(':')) params[name] = decodeURIComponent(value);
    else if (part !== value) return null;
  }
  return s.length <= p.length ? params : null;
}
