import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/validation-error';
import { parseWire } from './parse';
import { AttemptedRollout, Rollout } from './rollout';
import { ResourcesUpdate } from './resources';
import { Span } from './span';
import { readStoredDocument, SCHEMA_VERSION } from './stored-document';
import { camelToSnake, fromWire, snakeToCamel, toWire, type WireShape } from './wire-codec';
import { Worker } from './worker';
import type { z } from 'zod';

const fixtures = join(dirname(fileURLToPath(import.meta.url)), '__fixtures__', 'v1');
const load = (name: string): unknown => JSON.parse(readFileSync(join(fixtures, name), 'utf8'));

const cases: Array<[string, z.ZodType, WireShape]> = [
  ['rollout.json', Rollout, 'rollout'],
  ['attempted-rollout.json', AttemptedRollout, 'rollout'],
  ['worker.json', Worker, 'worker'],
  ['resources-update.json', ResourcesUpdate, 'resourcesUpdate'],
  ['span.json', Span, 'span'],
];

describe('frozen v1 fixtures', () => {
  for (const [file, schema, shape] of cases) {
    it(`${file} parses and round-trips to the identical wire JSON`, () => {
      const wire = load(file);
      const api = parseWire(schema, shape, wire, file);
      expect(toWire(shape, api)).toEqual(wire);
    });
  }

  it('keeps opaque JSON untouched and renames only known keys', () => {
    const api = parseWire(Rollout, 'rollout', load('rollout.json'), 'rollout') as Rollout;
    expect(api.rolloutId).toBe('ro-0123456789ab');
    expect(api.config.maxAttempts).toBe(3);
    expect(api.input).toEqual({ question: '2+2?', nested: { camelCaseKey: 1, snake_key: [1, 2] } });
    expect(api.metadata).toEqual({ task_id: 't-1', someKey: 'kept' });
  });

  it('keeps unknown span fields and nested unknown keys', () => {
    const api = parseWire(Span, 'span', load('span.json'), 'span') as Span & Record<string, unknown>;
    expect(api.kind).toBe('SpanKind.CLIENT');
    expect(api.instrumentation_scope).toEqual({ name: 'openai', version: '1.0' });
    expect(api.events[0]).toMatchObject({ name: 'exception', dropped_attributes_count: 0 });
    expect(api.links[0]!.context.traceState).toEqual({ vendor: 'x' });
    expect(api.attributes['prompt_token_ids']).toEqual([1, 2, 3]);
  });

  it('reads camelCase spellings of known keys, and leaves keys that only look like them (or Object.prototype names) alone', () => {
    const wire = {
      rollout_id: 'ro-1',
      attemptId: 'at-1',
      sequence_id: 2,
      constructor: 'c',
      toString: 1,
      trace_Id: 'x',
      status: { status_code: 'OK' },
    };
    expect(fromWire('span', wire)).toEqual({
      rolloutId: 'ro-1',
      attemptId: 'at-1',
      sequenceId: 2,
      constructor: 'c',
      toString: 1,
      trace_Id: 'x',
      status: { statusCode: 'OK' },
    });
    expect(toWire('span', { rolloutId: 'ro-1', rollout_id: 'kept', hasOwnProperty: true })).toEqual({
      rollout_id: 'kept',
      hasOwnProperty: true,
    });
  });

  it('reads the stored-document envelope of version 1 and refuses newer versions', () => {
    const doc = readStoredDocument(load('stored-document.json'));
    expect(doc.schemaVersion).toBe(1);
    expect(parseWire(Rollout, 'rollout', doc.data, 'rollout').mode).toBe('val');
    expect(() => readStoredDocument({ schemaVersion: SCHEMA_VERSION + 1, kind: 'rollout', data: {} })).toThrow(
      /newer than this AGL/,
    );
  });
});

describe('parseWire errors', () => {
  it('names the snake_case field and what is wrong', () => {
    const wire = load('rollout.json') as Record<string, unknown>;
    const bad = { ...wire, status: 'bogus', config: { max_attempts: 0 } };
    let caught: unknown;
    try {
      parseWire(Rollout, 'rollout', bad, 'rollout');
    } catch (error) {
      caught = error;
    }
    expect(ValidationError.isInstance(caught)).toBe(true);
    const paths = (caught as ValidationError).issues.map((i) => i.path);
    expect(paths).toContain('status');
    expect(paths).toContain('config.max_attempts');
    expect((caught as Error).message).toMatch(/^Invalid rollout: /);
  });

  it('rejects an attempt that belongs to another rollout', () => {
    const wire = load('attempted-rollout.json') as { attempt: Record<string, unknown> };
    const bad = { ...wire, attempt: { ...wire.attempt, rollout_id: 'ro-other' } };
    expect(() => parseWire(AttemptedRollout, 'rollout', bad, 'rollout')).toThrow(/attempt\.rollout_id/);
  });
});

describe('key conversion', () => {
  it('converts both ways', () => {
    expect(camelToSnake('lastHeartbeatTime')).toBe('last_heartbeat_time');
    expect(snakeToCamel('last_heartbeat_time')).toBe('lastHeartbeatTime');
    expect(snakeToCamel(camelToSnake('resourcesId'))).toBe('resourcesId');
  });
});
