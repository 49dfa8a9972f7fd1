import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

/** Options of {@link WalCheckpointer}. */
export interface WalCheckpointerOptions {
  /** The WAL grows past this many bytes before checkpointing moves off the main thread. Default 2 MiB. */
  startBytes?: number;
  /** How often the main thread checks the WAL size until then, and the worker checkpoints after, in ms. Default 1000 / 200. */
  checkIntervalMs?: number;
  checkpointIntervalMs?: number;
}

// A CommonJS script (an `eval` worker): no file to resolve in either the sources or the bundle.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const db = new Database(workerData.path, { timeout: 1000 });
db.pragma('synchronous = ' + workerData.synchronous);
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or locked: the next tick tries again */ }
}, workerData.intervalMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * Moves SQLite's WAL checkpoints off the main thread. SQLite normally copies the WAL back into the database inside the
 * `COMMIT` that crosses 1,000 pages, so one unlucky write pays for everyone's (and syncs the file). Once the WAL of a
 * busy store first grows past `startBytes`, this turns the automatic checkpoint off on the main connection and runs
 * `PRAGMA wal_checkpoint(PASSIVE)` from a worker thread with its own connection: it never blocks readers or writers,
 * and durability is unchanged (commits still go to the WAL first). Small stores never start the worker. If the worker
 * dies, the automatic checkpoint comes back.
 */
export class WalCheckpointer {
  readonly #db: Database.Database;
  readonly #path: string;
  readonly #options: Required<WalCheckpointerOptions>;
  #timer: ReturnType<typeof setInterval> | null = null;
  #worker: Worker | null = null;
  #stopped = false;

  constructor(db: Database.Database, path: string, options: WalCheckpointerOptions = {}) {
    this.#db = db;
    this.#path = path;
    this.#options = {
      startBytes: options.startBytes ?? 2 * 1024 * 1024,
      checkIntervalMs: options.checkIntervalMs ?? 1000,
      checkpointIntervalMs: options.checkpointIntervalMs ?? 200,
    };
    this.#timer = setInterval(() => this.#check(), this.#options.checkIntervalMs);
    this.#timer.unref();
  }

  /** Whether checkpoints run on the worker thread now. */
  get active(): boolean {
    return this.#worker !== null;
  }

  #check(): void {
    let size = 0;
    try {
      size = statSync(`${this.#path}-wal`).size;
    } catch {
      return;
    }
    if (size < this.#options.startBytes) return;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    this.#start();
  }

  #start(): void {
    if (this.#stopped) return;
    let worker: Worker;
    try {
      worker = new Worker(WORKER_SOURCE, {
        eval: true,
        workerData: {
          module: createRequire(import.meta.url).resolve('better-sqlite3'),
          path: this.#path,
          synchronous: String(this.#db.pragma('synchronous', { simple: true })) === '2' ? 'FULL' : 'NORMAL',
          intervalMs: this.#options.checkpointIntervalMs,
        },
      });
    } catch {
      return; // no worker threads here: SQLite's own checkpoints stay on
    }
    worker.unref();
    worker.on('error', () => undefined);
    worker.once('exit', () => {
      if (this.#worker === worker) this.#worker = null;
      if (!this.#stopped && this.#db.open) this.#db.pragma('wal_autocheckpoint = 1000');
    });
    this.#worker = worker;
    this.#db.pragma('wal_autocheckpoint = 0');
  }

  /** Stops the worker (its connection closes first, so the main connection's close can remove the WAL). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    const worker = this.#worker;
    if (!worker) return;
    this.#worker = null;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage('close');
    const timer = setTimeout(() => void worker.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  }
}
