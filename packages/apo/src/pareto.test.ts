import { describe, expect, it } from 'vitest';
import { complementaryPair, paretoFront, type ScoredCandidate } from './pareto';

const entry = (name: string, scores: Record<string, number>): ScoredCandidate<string> => ({
  candidate: name,
  perTask: new Map(Object.entries(scores)),
  score: Object.values(scores).reduce((a, b) => a + b, 0) / Object.keys(scores).length,
});
const TASKS = ['t1', 't2', 't3', 't4'];

describe('paretoFront', () => {
  it('keeps candidates that are best on some task, weighted by the tasks they win (ties count for each)', () => {
    const a = entry('a', { t1: 1, t2: 1, t3: 0, t4: 0 });
    const b = entry('b', { t1: 0, t2: 0, t3: 1, t4: 0.3 });
    const dominated = entry('c', { t1: 0.3, t2: 0, t3: 0, t4: 0 });
    const tie = entry('d', { t1: 1, t2: 0, t3: 0, t4: 0 });
    const front = paretoFront([a, b, dominated, tie], TASKS);
    expect(front.map((f) => [f.entry.candidate, f.wins])).toEqual([
      ['a', 2],
      ['b', 2],
      ['d', 1],
    ]);
  });
});

describe('complementaryPair', () => {
  it('picks the pair with the most wins on both sides, and none when one candidate dominates', () => {
    const a = entry('a', { t1: 1, t2: 1, t3: 0, t4: 0 });
    const b = entry('b', { t1: 0, t2: 0, t3: 1, t4: 1 });
    const c = entry('c', { t1: 1, t2: 0, t3: 1, t4: 0 });
    expect(complementaryPair([a, c, b], TASKS)?.map((x) => x.candidate)).toEqual(['a', 'b']);
    const top = entry('top', { t1: 1, t2: 1, t3: 1, t4: 1 });
    expect(complementaryPair([top, a], TASKS)).toBeNull();
  });
});
