import { useCallback, useEffect, useRef, useState } from 'react';

/** State of an async load. */
export interface AsyncState<T> {
  data: T | undefined;
  error: Error | null;
  loading: boolean;
  /** Loads again now (unless a load is already running). */
  reload: () => void;
}

interface Snapshot<T> {
  data: T | undefined;
  error: Error | null;
  loading: boolean;
}

/**
 * Runs `load` when `key` changes, and again every `pollMs` while `pollMs` is set (live updates). A poll never
 * cancels or overlaps a running load, so a slow server still updates the page; answers for an older key are dropped;
 * a failed poll keeps the last data and shows the error.
 */
export function useAsync<T>(load: () => Promise<T>, key: string, pollMs: number | null = null): AsyncState<T> {
  const [state, setState] = useState<Snapshot<T>>({ data: undefined, error: null, loading: true });
  const loadRef = useRef(load);
  loadRef.current = load;
  const generation = useRef(0);
  const inFlight = useRef(false);

  const start = useCallback(() => {
    if (inFlight.current) return;
    inFlight.current = true;
    const g = generation.current;
    setState((s) => ({ ...s, loading: true }));
    loadRef
      .current()
      .then(
        (data) => {
          if (g === generation.current) setState({ data, error: null, loading: false });
        },
        (err: unknown) => {
          if (g === generation.current) {
            setState((s) => ({ ...s, error: err instanceof Error ? err : new Error(String(err)), loading: false }));
          }
        },
      )
      .finally(() => {
        if (g === generation.current) inFlight.current = false;
      });
  }, []);

  useEffect(() => {
    generation.current += 1;
    inFlight.current = false;
    setState({ data: undefined, error: null, loading: true });
    start();
    return () => {
      generation.current += 1;
      inFlight.current = false;
    };
  }, [key, start]);

  useEffect(() => {
    if (pollMs === null) return undefined;
    const timer = setInterval(start, pollMs);
    return () => clearInterval(timer);
  }, [pollMs, key, start]);

  return { ...state, reload: start };
}
