import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightningStore } from '@agl/core/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, readJsonFixture, updatingFixtures, writeJsonFixture } from '@agl/testing';
import { MemoryStore } from '../memory/memory-store';
import { SqliteStore } from '../sqlite/sqlite-store';
import { createStoreServer, type StoreServer } from './index';

/**
 * Pins, for every route of reference v0 §3.3 (plus the batch extensions, AGL 1.0's event route and OTLP/JSON), one
 * request and the exact JSON the server answers. Requests live in `__fixtures__/wire-requests.json`; the expected
 * answers in `__fixtures__/wire-responses.json` (regenerate with AGL_UPDATE_FIXTURES=1, then review the diff;
 * a plain run never writes it, and a missing file fails).
 * Generated ids are normalised to `ro-1`, `at-1`, `rs-1`... in order of first appearance; the clock is fake.
 */

interface Step {
  route?: string;
  title?: string;
  method?: 'GET' | 'POST';
  path?: string;
  body?: unknown;
  advance?: number;
}
interface Recorded {
  route: string;
  title?: string;
  request: { method: string; path: string; body?: unknown };
  status: number;
  response: unknown;
}

const FIXTURES = join(import.meta.dirname, '__fixtures__');
const steps = JSON.parse(readFileSync(join(FIXTURES, 'wire-requests.json'), 'utf8')) as Step[];
const expectedPath = join(FIXTURES, 'wire-responses.json');
const update = updatingFixtures();

const ID = /\b(ro|at|rs)-[0-9a-f]{8,12}\b/g;

class IdMap {
  readonly #toName = new Map<string, string>();
  readonly #toReal = new Map<string, string>();
  readonly #counters: Record<string, number> = { ro: 0, at: 0, rs: 0 };

  normalize(value: unknown): unknown {
    if (typeof value === 'string') {
      return value.replace(ID, (real: string, prefix: string) => {
        let name = this.#toName.get(real);
        if (name === undefined) {
          this.#counters[prefix]! += 1;
          name = `${prefix}-${this.#counters[prefix]}`;
          this.#toName.set(real, name);
          this.#toReal.set(name, real);
        }
        return name;
      });
    }
    if (Array.isArray(value)) return value.map((item) => this.normalize(item));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.normalize(v)]));
    }
    return value;
  }

  realize(value: unknown): unknown {
    if (typeof value === 'string')
      return value.replace(/\b(ro|at|rs)-\d+\b/g, (name) => this.#toReal.get(name) ?? name);
    if (Array.isArray(value)) return value.map((item) => this.realize(item));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, this.realize(v)]));
    }
    return value;
  }
}

// The SQLite store answers span queries from its stored JSON text (`toWireJson`), the memory store from objects: both
// must give the pinned answers.
const backends: Array<[string, (clock: FakeClock) => LightningStore]> = [
  ['memory', (clock) => new MemoryStore({ clock, scanDebounceSeconds: 0 })],
  [
    'sqlite',
    (clock) =>
      new SqliteStore({
        path: join(mkdtempSync(join(tmpdir(), 'agl-wire-')), 'wire.sqlite'),
        clock,
        scanDebounceSeconds: 0,
      }),
  ],
];

describe.each(backends)(
  'wire format (%s store): one pinned request and exact JSON answer per route',
  (backend, makeStore) => {
    const clock = new FakeClock(1_700_000_000);
    const store = makeStore(clock);
    let server: StoreServer;
    const recorded: Recorded[] = [];

    beforeAll(async () => {
      server = await createStoreServer({ store, port: 0, clock });
      const ids = new IdMap();
      for (const step of steps) {
        if (step.advance !== undefined) {
          clock.advance(step.advance);
          continue;
        }
        const path = ids.realize(step.path) as string;
        const body = step.body === undefined ? undefined : JSON.stringify(ids.realize(step.body));
        const response = await fetch(`${server.url}${path}`, {
          method: step.method,
          headers: body === undefined ? {} : { 'content-type': 'application/json' },
          body,
        });
        const text = await response.text();
        recorded.push({
          route: step.route ?? '',
          ...(step.title ? { title: step.title } : {}),
          request: { method: step.method!, path: step.path!, ...(step.body === undefined ? {} : { body: step.body }) },
          status: response.status,
          response: text === '' ? '<empty body>' : ids.normalize(JSON.parse(text)),
        });
      }
      if (update && backend === 'memory') writeJsonFixture(expectedPath, recorded);
    });

    afterAll(async () => {
      await server.close();
      await store.close();
    });

    // Statistics name the backend, and only some backends count span bytes.
    const comparable = (r: Recorded): unknown => {
      if (backend === 'memory' || r.route !== '#18') return r.response;
      const { name: _name, total_span_bytes: _bytes, ...rest } = r.response as Record<string, unknown>;
      return rest;
    };
    // A missing file fails the run (readJsonFixture throws) unless this run is the one generating it.
    const expected = update && !existsSync(expectedPath) ? [] : readJsonFixture<Recorded[]>(expectedPath);

    it('covers every route of the reference route table (#1-#30 except the dashboard and Prometheus)', () => {
      const routes = new Set(steps.map((s) => s.route?.split(' ')[0]).filter(Boolean));
      for (let n = 1; n <= 30; n += 1) expect(routes.has(`#${n}`), `route #${n}`).toBe(true);
      expect((update ? recorded : expected).length).toBe(steps.filter((s) => s.advance === undefined).length);
    });

    expected.forEach((want, index) => {
      it(`${want.route}${want.title ? ` (${want.title})` : ''}: ${want.request.method} ${want.request.path} → ${want.status}`, () => {
        const got = recorded[index]!;
        expect(got.request).toStrictEqual(want.request);
        expect({ status: got.status, response: comparable(got) }).toStrictEqual({
          status: want.status,
          response: comparable(want),
        });
      });
    });
  },
);
