import type { ReactNode } from 'react';
import { ApiError } from '../api/api-client';
import { navigate } from '../lib/router';

/** Shown while the first answer is on its way. */
export function Loading({ what }: { what: string }) {
  return (
    <div className="state loading" role="status">
      Loading {what}…
    </div>
  );
}

/** Shown when there is nothing to show, with a hint of what fills it. */
export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="state empty" data-testid="empty-state">
      <strong>{title}</strong>
      {children ? <p>{children}</p> : null}
    </div>
  );
}

/** Shows a failed load: the server's detail and what to do. */
export function ErrorBox({ error, onRetry }: { error: Error; onRetry?: () => void }) {
  const api = error instanceof ApiError ? error : null;
  const hint =
    api?.status === 401
      ? 'The store server needs a token: use “Token” at the top right.'
      : api?.status === 0
        ? 'Is `agl store serve` running?'
        : null;
  return (
    <div className="state error" role="alert" data-testid="error-state">
      <strong>{api ? `Error ${api.status || ''} ${api.errorType}` : 'Error'}</strong>
      <p>{error.message}</p>
      {hint ? <p className="hint">{hint}</p> : null}
      {onRetry ? (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      ) : null}
    </div>
  );
}

/** A coloured status pill. */
export function StatusBadge({ status }: { status: string | null }) {
  const s = status ?? 'none';
  return <span className={`badge status-${s}`}>{s}</span>;
}

/** An in-app link that navigates without reloading. */
export function Link({
  to,
  children,
  className,
  testId,
}: {
  to: string;
  children: ReactNode;
  className?: string;
  testId?: string;
}) {
  return (
    <a
      href={to}
      className={className}
      data-testid={testId}
      onClick={(event) => {
        if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

/** Pretty-printed JSON. */
export function JsonView({ value, testId }: { value: unknown; testId?: string }) {
  return (
    <pre className="json" data-testid={testId}>
      {JSON.stringify(value, null, 2)}
    </pre>
  );
}
