import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getMessageValue, getObjectValue, getRewardsFromSpan, TraceToTransitions } from '@agl/core/transitions';
import type { Span } from '@agl/core/schema';
import {
  AglTracer,
  emitAnnotation,
  emitException,
  emitMessage,
  emitObject,
  emitReward,
  operation,
  withRolloutContext,
} from '@agl/core/tracer';
import { MemoryStore } from '@agl/store';
import { SqliteStore } from '@agl/store/sqlite';

const tracers: AglTracer[] = [];
function newTracer(options: ConstructorParameters<typeof AglTracer>[0] = {}): AglTracer {
  const tracer = new AglTracer({ exitHooks: false, scheduledDelayMillis: 60_000, ...options });
  tracers.push(tracer);
  return tracer;
}
afterEach(async () => {
  for (const t of tracers.splice(0)) await t.shutdown();
});

async function spansOf(store: MemoryStore | SqliteStore, rolloutId: string): Promise<Span[]> {
  return (await store.querySpans({ rolloutId, sortBy: 'sequence_id' })).items;
}

describe('tracer + emitters against a real MemoryStore', () => {
  it('keeps concurrent rollouts apart and yields the expected transitions and rewards', async () => {
    const store = new MemoryStore();
    const tracer = newTracer();
    const llm = tracer.getTracer('fake-adapter');
    const rollouts = await Promise.all(
      [0, 1, 2].map((i) => store.startRollout({ input: { n: i }, metadata: { task_id: `t${i}` } })),
    );

    await Promise.all(
      rollouts.map((r, i) =>
        withRolloutContext({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, store, tracer }, () =>
          operation('agent', async () => {
            for (let step = 0; step < 2; step += 1) {
              await new Promise((res) => setTimeout(res, 1 + ((i + step) % 3)));
              const span = llm.startSpan('openai.chat.completion', {
                attributes: {
                  'agent.name': 'ignored-on-self',
                  'gen_ai.response.id': `${r.rolloutId}-${step}`,
                  'gen_ai.prompt.0.role': 'user',
                  'gen_ai.prompt.0.content': `q${i}.${step}`,
                  'gen_ai.completion.0.role': 'assistant',
                  'gen_ai.completion.0.content': `a${i}.${step}`,
                  prompt_token_ids: [i, step],
                  response_token_ids: [100 + i],
                },
              });
              await new Promise((res) => setTimeout(res, 1));
              span.setStatus({ code: SpanStatusCode.OK });
              span.end();
              emitReward(step === 0 ? 0.1 * (i + 1) : 1 + i);
            }
          }),
        ),
      ),
    );
    await tracer.forceFlush();

    for (const [i, r] of rollouts.entries()) {
      const spans = await spansOf(store, r.rolloutId);
      expect(spans).toHaveLength(5);
      expect(new Set(spans.map((s) => s.attemptId))).toEqual(new Set([r.attempt.attemptId]));
      expect(spans.map((s) => s.sequenceId)).toEqual([1, 2, 3, 4, 5]);
      const prompts = spans.map((s) => s.attributes['gen_ai.prompt.0.content']).filter(Boolean);
      expect(prompts).toEqual([`q${i}.0`, `q${i}.1`]);
      const trajectory = await new TraceToTransitions().fromStore({ store, rolloutId: r.rolloutId });
      expect(trajectory.taskId).toBe(`t${i}`);
      expect(trajectory.finalReward).toBe(1 + i);
      expect(trajectory.transitions.map((t) => [t.state.tokenIds, t.action.tokenIds, t.reward])).toEqual([
        [[i, 0], [100 + i], 0.1 * (i + 1)],
        [[i, 1], [100 + i], 1 + i],
      ]);
      expect(trajectory.transitions[1]?.action.message).toMatchObject({ role: 'assistant', content: `a${i}.1` });
      // A span is a heartbeat: the attempt is running now.
      expect((await store.getLatestAttempt(r.rolloutId))?.status).toBe('running');
    }
    await store.close();
  });

  it("stores every emitter's span so the readers get the values back", async () => {
    const store = new MemoryStore();
    const tracer = newTracer();
    const r = await store.startRollout({ input: null });
    await withRolloutContext({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, store, tracer }, async () => {
      emitReward({ acc: 1, len: 0.25 });
      emitMessage('thinking');
      emitObject({ plan: ['a', 'b'] });
      emitException(new RangeError('out of range'));
      emitAnnotation({ tag: 'x', score: { raw: 3 } });
      await expect(
        operation('fails', () => {
          throw new Error('nope');
        }),
      ).rejects.toThrow('nope');
    });
    await tracer.forceFlush();
    const spans = await spansOf(store, r.rolloutId);
    expect(spans.map((s) => s.name)).toEqual([
      'agentlightning.annotation',
      'agentlightning.message',
      'agentlightning.object',
      'agentlightning.exception',
      'agentlightning.annotation',
      'agentlightning.operation',
    ]);
    const [reward, message, object, exception, annotation, op] = spans as [Span, Span, Span, Span, Span, Span];
    expect(getRewardsFromSpan(reward)).toEqual([
      { name: 'acc', value: 1 },
      { name: 'len', value: 0.25 },
    ]);
    expect(getMessageValue(message)).toBe('thinking');
    expect(getObjectValue(object)).toEqual({ plan: ['a', 'b'] });
    expect(exception.attributes).toMatchObject({ 'exception.type': 'RangeError', 'exception.message': 'out of range' });
    expect(annotation.attributes).toMatchObject({ tag: 'x', 'score.raw': 3 });
    expect(op.status).toEqual({ statusCode: 'ERROR', description: 'nope' });
    await store.close();
  });

  it('batches spans into addSpans calls of at most maxExportBatchSize', async () => {
    const store = new MemoryStore();
    const addSpans = vi.spyOn(store, 'addSpans');
    const tracer = newTracer({ maxExportBatchSize: 4 });
    const r = await store.startRollout({ input: null });
    withRolloutContext({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, store, tracer }, () => {
      for (let i = 0; i < 10; i += 1) emitMessage(`m${i}`);
    });
    await tracer.forceFlush();
    expect(addSpans.mock.calls.map((call) => call[0].length)).toEqual([4, 4, 2]);
    const bodies = (await spansOf(store, r.rolloutId)).map((s) => s.attributes['agentlightning.message.body']);
    expect(bodies).toEqual(Array.from({ length: 10 }, (_, i) => `m${i}`));
    await store.close();
  });

  it('counts dropped spans when the queue is full and stores the rest', async () => {
    const store = new MemoryStore();
    const warn = vi.fn();
    const tracer = newTracer({ maxQueueSize: 2, maxExportBatchSize: 100, logger: { warn } });
    const r = await store.startRollout({ input: null });
    withRolloutContext({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, store, tracer }, () => {
      for (let i = 0; i < 5; i += 1) emitMessage(`m${i}`);
    });
    await tracer.forceFlush();
    expect(tracer.stats()).toMatchObject({ dropped: 3, exported: 2, queued: 0 });
    expect(await spansOf(store, r.rolloutId)).toHaveLength(2);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('dropped 3 span(s)'));
    await store.close();
  });

  it("reports a span for an unknown rollout as failed, without losing other rollouts' spans", async () => {
    const store = new MemoryStore();
    const warn = vi.fn();
    const tracer = newTracer({ logger: { warn } });
    const r = await store.startRollout({ input: null });
    withRolloutContext({ rolloutId: 'ro-nope', attemptId: 'at-nope', store, tracer }, () => emitReward(1));
    withRolloutContext({ rolloutId: r.rolloutId, attemptId: r.attempt.attemptId, store, tracer }, () => emitReward(2));
    await tracer.forceFlush();
    expect(tracer.stats()).toMatchObject({ exported: 1, failed: 1 });
    expect(await spansOf(store, r.rolloutId)).toHaveLength(1);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('ro-nope'));
    await store.close();
  });
});

describe('flush on process exit (child process, real SQLite file)', () => {
  const child = fileURLToPath(new URL('./__fixtures__/tracer-exit-child.ts', import.meta.url));
  let dir: string;
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function prepare(): Promise<{ db: string; rolloutId: string; attemptId: string }> {
    dir = mkdtempSync(join(tmpdir(), 'agl-tracer-exit-'));
    const db = join(dir, 'agl.sqlite');
    const store = new SqliteStore({ path: db });
    const r = await store.startRollout({ input: 'exit test' });
    await store.close();
    return { db, rolloutId: r.rolloutId, attemptId: r.attempt.attemptId };
  }

  function run(
    args: string[],
    onReady?: (pid: number) => void,
  ): Promise<{ code: number | null; signal: string | null; stderr: string }> {
    return new Promise((resolve, reject) => {
      const proc = spawn(process.execPath, ['--conditions=@agl/source', '--import', 'tsx', child, ...args], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      proc.stdout.on('data', (d: Buffer) => {
        if (d.toString().includes('READY')) onReady?.(proc.pid as number);
      });
      proc.on('error', reject);
      proc.on('exit', (code, signal) => resolve({ code, signal, stderr }));
    });
  }

  async function storedSpans(db: string, rolloutId: string): Promise<Span[]> {
    const store = new SqliteStore({ path: db });
    try {
      return (await store.querySpans({ rolloutId, sortBy: 'sequence_id' })).items;
    } finally {
      await store.close();
    }
  }

  it('flushes on beforeExit when the agent process just ends', async () => {
    const { db, rolloutId, attemptId } = await prepare();
    const result = await run([db, rolloutId, attemptId, 'exit']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const spans = await storedSpans(db, rolloutId);
    expect(spans.map((s) => [s.name, s.attemptId])).toEqual([
      ['agentlightning.message', attemptId],
      ['agentlightning.annotation', attemptId],
    ]);
    expect(spans[1]?.attributes['agentlightning.reward.0.value']).toBe(0.75);
  });

  it('flushes on SIGTERM and still dies of SIGTERM (default behaviour kept)', async () => {
    const { db, rolloutId, attemptId } = await prepare();
    const result = await run([db, rolloutId, attemptId, 'signal'], (pid) => process.kill(pid, 'SIGTERM'));
    expect(result.signal).toBe('SIGTERM');
    const spans = await storedSpans(db, rolloutId);
    expect(spans.map((s) => s.name)).toEqual(['agentlightning.message', 'agentlightning.annotation']);
  });

  it('flushes on SIGINT too', async () => {
    const { db, rolloutId, attemptId } = await prepare();
    const result = await run([db, rolloutId, attemptId, 'signal'], (pid) => process.kill(pid, 'SIGINT'));
    expect(result.signal).toBe('SIGINT');
    expect(await storedSpans(db, rolloutId)).toHaveLength(2);
  });
});
