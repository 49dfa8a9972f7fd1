import pg from 'pg';
import type { ChangeNotice } from './pg-storage';

/** Options of {@link PgNotifier}. */
export interface PgNotifierOptions {
  /** Connection string (without `?schema=`). */
  url: string;
  channel: string;
  onNotice: (notice: ChangeNotice) => void;
  /** Called after a (re)connect: events may have been missed while the connection was down. */
  onReconnect: () => void;
}

/**
 * One dedicated connection that `LISTEN`s on the store's channel, so every server hears the changes any server
 * commits (rollouts that became terminal, rollouts enqueued). Reconnects with backoff when the connection drops;
 * callers keep a slow poll as a safety net for the gap.
 */
export class PgNotifier {
  readonly #o: PgNotifierOptions;
  #client: pg.Client | null = null;
  #closed = false;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #failures = 0;

  constructor(options: PgNotifierOptions) {
    this.#o = options;
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.#client !== null;
  }

  /** Connects and listens; resolves once listening (or throws the connect error). */
  async start(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#o.url, application_name: 'agl-store-listen' });
    client.on('error', () => this.#lost(client));
    client.on('end', () => this.#lost(client));
    client.on('notification', (message) => {
      if (message.channel !== this.#o.channel || !message.payload) return;
      try {
        this.#o.onNotice(JSON.parse(message.payload) as ChangeNotice);
      } catch {
        // a payload we do not understand (another AGL version): ignore it
      }
    });
    await client.connect();
    await client.query(`LISTEN "${this.#o.channel}"`);
    if (this.#closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#failures = 0;
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = null;
    client.end().catch(() => undefined);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#closed || this.#timer) return;
    const delay = Math.min(5_000, 100 * 2 ** this.#failures);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.start().then(
        () => this.#o.onReconnect(),
        () => {
          this.#failures += 1;
          this.#schedule();
        },
      );
    }, delay);
    this.#timer.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    if (client) await client.end().catch(() => undefined);
  }
}
