import { useEffect, useMemo, useRef, useState } from 'react';
import type { ChatMessage, Span } from '@agl/core/schema';
import type { ApiClient } from '../api/api-client';
import { Empty, ErrorBox, JsonView, Loading } from '../components/states';
import { formatDuration, formatReward } from '../lib/format';
import { navigate } from '../lib/router';
import { buildWaterfall, llmViewOf, messageText, type WaterfallRow } from '../lib/waterfall';

/** Spans fetched per request; more come with “Load more”, never all of a huge attempt at once. */
export const SPAN_PAGE = 500;

/** The messages of an LLM call (prompt or response), each with its role, text and tool calls. */
function MessageList({ messages, testId }: { messages: readonly ChatMessage[]; testId: string }) {
  return messages.map((m, i) => (
    <div key={i} className={`msg role-${m.role}`} data-testid={testId}>
      <span className="role">{m.role}</span>
      <pre>{messageText(m)}</pre>
      {m.toolCalls?.map((c) => (
        <pre key={c.id} className="tool-call">
          → {c.name}({c.arguments})
        </pre>
      ))}
    </div>
  ));
}

function SpanDetail({ row }: { row: WaterfallRow }) {
  const [raw, setRaw] = useState(false);
  const llm = row.kind === 'llm' ? llmViewOf(row.span) : null;
  const a = row.span.attributes;
  return (
    <aside className="span-detail" data-testid="span-detail">
      <h3>
        <span className={`kind kind-${row.kind}`}>{row.kind}</span> {row.span.name}
      </h3>
      <p className="muted mono">
        span {row.span.spanId} · seq {row.span.sequenceId} · {formatDuration(row.durationSeconds)}
      </p>
      {row.kind === 'reward' ? (
        <p className="reward-value">
          Reward <strong data-testid="span-reward">{formatReward(row.reward)}</strong>
        </p>
      ) : null}
      {llm ? (
        <div className="llm">
          <p>
            Model <strong>{llm.model ?? '—'}</strong> · tokens in <strong>{llm.inputTokens ?? '—'}</strong> / out{' '}
            <strong>{llm.outputTokens ?? '—'}</strong>
          </p>
          <h4>Prompt</h4>
          <MessageList messages={llm.messages} testId="prompt-message" />
          <h4>Response</h4>
          <MessageList messages={llm.choices} testId="response-message" />
        </div>
      ) : null}
      {row.kind === 'tool' ? (
        <div className="tool">
          <p>
            Tool <strong>{String(a['tool.name'] ?? a['gen_ai.tool.name'])}</strong>
          </p>
          <pre>{String(a['tool.parameters'] ?? a['gen_ai.tool.call.arguments'] ?? '')}</pre>
        </div>
      ) : null}
      <button type="button" onClick={() => setRaw((v) => !v)} data-testid="toggle-raw">
        {raw ? 'Hide raw attributes' : 'Show raw attributes'}
      </button>
      {raw ? <JsonView value={a} testId="raw-attributes" /> : null}
    </aside>
  );
}

/** The span waterfall of one attempt: tree, timing bars, kinds, token counts and reward markers. */
export function TraceView({
  client,
  rolloutId,
  attemptId,
  live = false,
}: {
  client: ApiClient;
  rolloutId: string;
  attemptId: string;
  live?: boolean;
}) {
  const [spans, setSpans] = useState<Span[]>([]);
  const [total, setTotal] = useState<number | null>(null);
  const [error, setError] = useState<Error | null>(null);
  const [selected, setSelected] = useState<string | null>(null);
  const [pages, setPages] = useState(1);
  const [tick, setTick] = useState(0);
  const busy = useRef(false);

  useEffect(() => {
    setSpans([]);
    setTotal(null);
    setSelected(null);
    setPages(1);
  }, [rolloutId, attemptId]);

  useEffect(() => {
    let cancelled = false;
    busy.current = true;
    (async () => {
      const out: Span[] = [];
      let count = 0;
      for (let p = 0; p < pages; p += 1) {
        const page = await client.spans(rolloutId, attemptId, { limit: SPAN_PAGE, offset: p * SPAN_PAGE });
        out.push(...page.items);
        count = page.total;
        if (out.length >= page.total) break;
      }
      if (!cancelled) {
        setSpans(out);
        setTotal(count);
        setError(null);
      }
    })()
      .catch((err: unknown) => {
        if (!cancelled) setError(err instanceof Error ? err : new Error(String(err)));
      })
      .finally(() => {
        if (!cancelled) busy.current = false;
      });
    return () => {
      cancelled = true;
    };
  }, [client, rolloutId, attemptId, pages, tick]);

  useEffect(() => {
    if (!live) return undefined;
    // A live attempt reloads its spans every 3 s; a slow load is never cut short by the next tick.
    const timer = setInterval(() => {
      if (!busy.current) setTick((t) => t + 1);
    }, 3000);
    return () => clearInterval(timer);
  }, [live]);

  const rows = useMemo(() => buildWaterfall(spans), [spans]);
  if (error) return <ErrorBox error={error} onRetry={() => setTick((t) => t + 1)} />;
  if (total === null) return <Loading what="spans" />;
  if (total === 0)
    return (
      <Empty title="This attempt has no spans.">Spans appear once the agent's tracer flushes them to the store.</Empty>
    );
  const current = rows.find((r) => r.span.spanId === selected) ?? null;
  const tokens = rows.reduce((sum, r) => sum + (r.inputTokens ?? 0) + (r.outputTokens ?? 0), 0);
  return (
    <div className="trace">
      <p className="muted" data-testid="trace-summary">
        {spans.length} of {total} spans · {rows.filter((r) => r.kind === 'llm').length} LLM calls · {tokens} tokens ·{' '}
        {rows.filter((r) => r.kind === 'reward').length} rewards
      </p>
      <div className="trace-body">
        <div className="waterfall" data-testid="waterfall" role="tree">
          {rows.map((row) => (
            <button
              type="button"
              role="treeitem"
              key={row.span.spanId}
              className={`wf-row${selected === row.span.spanId ? ' selected' : ''}`}
              data-testid="waterfall-row"
              data-kind={row.kind}
              onClick={() => setSelected(row.span.spanId)}
            >
              <span className="wf-name" style={{ paddingLeft: `${row.depth * 14 + 4}px` }}>
                <span className={`kind kind-${row.kind}`}>{row.kind}</span> {row.span.name}
                {row.label ? <span className="muted"> {row.label}</span> : null}
              </span>
              <span className="wf-track">
                <span
                  className={`wf-bar bar-${row.kind}`}
                  data-testid="waterfall-bar"
                  style={{ left: `${row.offset * 100}%`, width: `max(2px, ${row.width * 100}%)` }}
                />
                {row.kind === 'reward' ? (
                  <span className="wf-reward" style={{ left: `${row.offset * 100}%` }} data-testid="reward-marker">
                    ★ {formatReward(row.reward)}
                  </span>
                ) : null}
              </span>
              <span className="wf-meta">
                {row.inputTokens !== null || row.outputTokens !== null
                  ? `${row.inputTokens ?? 0}→${row.outputTokens ?? 0} tok · `
                  : ''}
                {formatDuration(row.durationSeconds)}
              </span>
            </button>
          ))}
          {spans.length < total ? (
            <button type="button" className="more" onClick={() => setPages((p) => p + 1)}>
              Load {Math.min(SPAN_PAGE, total - spans.length)} more spans
            </button>
          ) : null}
        </div>
        {current ? (
          <SpanDetail row={current} />
        ) : (
          <aside className="span-detail muted">Click a span to see its messages and attributes.</aside>
        )}
      </div>
    </div>
  );
}

/** `/traces`: jump to a rollout's trace by id. */
export function TracesPage() {
  const [id, setId] = useState('');
  return (
    <section>
      <h1>Traces</h1>
      <p>Open a rollout from the Rollouts table to see its span waterfall, or enter a rollout id:</p>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (id.trim()) navigate(`/rollouts/${encodeURIComponent(id.trim())}`);
        }}
      >
        <input aria-label="Rollout id" placeholder="ro-…" value={id} onChange={(e) => setId(e.target.value)} />
        <button type="submit">Open</button>
      </form>
    </section>
  );
}
