import { describe, expect, it } from 'vitest';
import { testRollout, testSpanDoc } from '../__fixtures__/test-records';
import { newAttemptRecord, newWorker } from '../engine/rules';
import { MemoryStorage } from './memory-storage';

const rollout = testRollout;

describe('MemoryStorage transactions', () => {
  it('rolls back every kind of write when the transaction throws', () => {
    const s = new MemoryStorage();
    s.transaction(() => {
      s.insertRollouts([rollout('ro-a')]);
      s.enqueue(['ro-a']);
      s.incrementSequence('ro-a', 3);
    });
    expect(() =>
      s.transaction(() => {
        s.insertRollouts([rollout('ro-b')]);
        s.updateRollout({ ...rollout('ro-a'), status: 'failed' });
        s.enqueue(['ro-b']);
        expect(s.dequeue()).toBe('ro-a');
        s.incrementSequence('ro-a', 5);
        s.insertAttempt(newAttemptRecord('ro-a', 1, null, 1, 'at-1'));
        s.insertSpans([testSpanDoc('ro-a', 'at-1', { spanId: 'x' })]);
        s.putWorker({ ...newWorker('w'), status: 'idle' });
        s.putResources({ resourcesId: 'r', createTime: 1, updateTime: 1, version: 1, resources: {} });
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(s.listRollouts().map((r) => [r.rolloutId, r.status])).toEqual([['ro-a', 'queuing']]);
    expect(s.countAttempts()).toBe(0);
    expect(s.countSpans()).toBe(0);
    expect(s.countWorkers()).toBe(0);
    expect(s.getLatestResourcesId()).toBeNull();
    expect(s.isQueued('ro-a')).toBe(true);
    expect(s.isQueued('ro-b')).toBe(false);
    expect(s.transaction(() => s.incrementSequence('ro-a', 1))).toBe(4);
    expect(s.transaction(() => [s.dequeue(), s.dequeue()])).toEqual(['ro-a', null]);
  });

  it('hands out copies, so callers never change stored state', () => {
    const s = new MemoryStorage();
    s.transaction(() => s.insertRollouts([rollout('ro-a')]));
    const copy = s.getRollout('ro-a')!;
    copy.status = 'failed';
    (copy.metadata as Record<string, unknown>).x = 1;
    expect(s.getRollout('ro-a')).toMatchObject({ status: 'queuing', metadata: {} });
  });
});
