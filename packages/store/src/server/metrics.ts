import type { FastifyInstance } from 'fastify';
import type { LightningStore } from '@agl/core/store';

/** Upper bounds of the request latency histogram, in seconds. */
const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const STATUSES = ['queuing', 'preparing', 'running', 'succeeded', 'failed', 'cancelled', 'requeuing'] as const;

/** A store that can report its gauges in one query (PostgresStore does). */
interface GaugeSource {
  gauges(): Promise<{ queueDepth: number; rolloutsByStatus: Record<string, number> }>;
}

const hasGauges = (store: LightningStore): store is LightningStore & GaugeSource =>
  typeof (store as Partial<GaugeSource>).gauges === 'function';

interface Series {
  count: number;
  sum: number;
  buckets: number[];
}

const escapeLabel = (value: string): string => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/**
 * Request counters and latency histograms per route, kept in memory by one server. Rendered with the store's gauges
 * in Prometheus's text format by {@link registerMetricsRoute}.
 */
export class StoreMetrics {
  readonly #requests = new Map<string, number>();
  readonly #latency = new Map<string, Series>();
  #lastSpans: { total: number; at: number } | null = null;

  /** Records one answered request. `route` is the route pattern (`/v1/agl/rollouts/:rollout_id`), not the raw URL. */
  observe(method: string, route: string, status: number, seconds: number): void {
    const key = `${method}\u0000${route}\u0000${status}`;
    this.#requests.set(key, (this.#requests.get(key) ?? 0) + 1);
    const lkey = `${method}\u0000${route}`;
    let series = this.#latency.get(lkey);
    if (!series) {
      series = { count: 0, sum: 0, buckets: BUCKETS.map(() => 0) };
      this.#latency.set(lkey, series);
    }
    series.count += 1;
    series.sum += seconds;
    for (let i = 0; i < BUCKETS.length; i += 1) if (seconds <= BUCKETS[i]!) series.buckets[i]! += 1;
  }

  /** The Prometheus text exposition (version 0.0.4) of the counters plus the store's current gauges. */
  async render(store: LightningStore, nowSeconds: number): Promise<string> {
    const out: string[] = [];
    out.push(
      '# HELP agl_store_http_requests_total HTTP requests answered by this server, by method, route and status.',
    );
    out.push('# TYPE agl_store_http_requests_total counter');
    for (const [key, n] of this.#requests) {
      const [method, route, status] = key.split('\u0000') as [string, string, string];
      out.push(
        `agl_store_http_requests_total{method="${method}",route="${escapeLabel(route)}",status="${status}"} ${n}`,
      );
    }
    out.push('# HELP agl_store_http_request_duration_seconds Time to answer a request, by method and route.');
    out.push('# TYPE agl_store_http_request_duration_seconds histogram');
    for (const [key, s] of this.#latency) {
      const [method, route] = key.split('\u0000') as [string, string];
      const labels = `method="${method}",route="${escapeLabel(route)}"`;
      BUCKETS.forEach((le, i) =>
        out.push(`agl_store_http_request_duration_seconds_bucket{${labels},le="${le}"} ${s.buckets[i]}`),
      );
      out.push(`agl_store_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${s.count}`);
      out.push(`agl_store_http_request_duration_seconds_sum{${labels}} ${s.sum}`);
      out.push(`agl_store_http_request_duration_seconds_count{${labels}} ${s.count}`);
    }

    const stats = await store.statistics();
    let byStatus: Record<string, number>;
    let queueDepth: number;
    if (hasGauges(store)) {
      const g = await store.gauges();
      byStatus = g.rolloutsByStatus;
      queueDepth = g.queueDepth;
    } else {
      byStatus = {};
      for (const status of STATUSES)
        byStatus[status] = (await store.queryRollouts({ statusIn: [status], limit: 0 })).total;
      queueDepth = (byStatus.queuing ?? 0) + (byStatus.requeuing ?? 0);
    }
    out.push('# HELP agl_store_queue_depth Rollouts waiting in the queue (queuing or requeuing).');
    out.push('# TYPE agl_store_queue_depth gauge');
    out.push(`agl_store_queue_depth ${queueDepth}`);
    out.push('# HELP agl_store_rollouts Rollouts in the store, by status.');
    out.push('# TYPE agl_store_rollouts gauge');
    for (const status of STATUSES) out.push(`agl_store_rollouts{status="${status}"} ${byStatus[status] ?? 0}`);
    out.push('# HELP agl_store_spans_total Spans stored (the whole store, every server). rate() of it is spans/s.');
    out.push('# TYPE agl_store_spans_total counter');
    out.push(`agl_store_spans_total ${stats.totalSpans}`);
    const previous = this.#lastSpans;
    const perSecond =
      previous && nowSeconds > previous.at
        ? Math.max(0, (stats.totalSpans - previous.total) / (nowSeconds - previous.at))
        : 0;
    this.#lastSpans = { total: stats.totalSpans, at: nowSeconds };
    out.push('# HELP agl_store_spans_per_second Spans stored per second since the previous scrape of this server.');
    out.push('# TYPE agl_store_spans_per_second gauge');
    out.push(`agl_store_spans_per_second ${perSecond}`);
    for (const [name, value, help] of [
      ['agl_store_attempts_total', stats.totalAttempts, 'Attempts in the store.'],
      ['agl_store_workers', stats.totalWorkers, 'Workers known to the store.'],
      ['agl_store_resources', stats.totalResources, 'Resource versions in the store.'],
    ] as const) {
      out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${value}`);
    }
    return `${out.join('\n')}\n`;
  }
}

/**
 * Adds `GET /metrics` (Prometheus text format) and the hook that counts every request. Behind the bearer token like
 * every route when one is set (Prometheus: `authorization: { credentials: <token> }`).
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  options: { store: LightningStore; now: () => number },
): StoreMetrics {
  const metrics = new StoreMetrics();
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.render(options.store, options.now());
    return reply.code(200).type('text/plain; version=0.0.4; charset=utf-8').send(text);
  });
  return metrics;
}
