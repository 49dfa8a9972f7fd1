import { TinyTokenizer } from '@agl/tiny-llm';
import { describe, expect, it } from 'vitest';
import { calcTokenizer, evaluate, isValOperand, makeTasks, parseOps } from './calc-tasks';

describe('Calc-X tasks and tokenizers', () => {
  it('tokenizes numbers by digit pairs or one digit a token (the default)', () => {
    const pairs = new TinyTokenizer(calcTokenizer('digit-pairs'));
    const digits = new TinyTokenizer(calcTokenizer('digits'));
    expect(pairs.encode('1234*567').map((id) => pairs.decode([id]))).toEqual(['12', '34', '*', '56', '7']);
    expect(digits.encode('1234*567').map((id) => digits.decode([id]))).toEqual([
      '1',
      '2',
      '3',
      '4',
      '*',
      '5',
      '6',
      '7',
    ]);
    expect(digits.decode(digits.encode('-4450'))).toBe('-4450');
  });

  it('draws validation operands only from the held-out fifth, and answers with the tool', () => {
    const val = makeTasks({ n: 50, seed: 3, split: 'val' });
    const train = makeTasks({ n: 50, seed: 3, split: 'train' });
    const operands = (tasks: typeof val) => tasks.flatMap((t) => t.question.split(/[-+*]/).map(Number));
    expect(operands(val).every(isValOperand)).toBe(true);
    expect(operands(train).some(isValOperand)).toBe(false);
    for (const t of [...val, ...train]) expect(evaluate(t.question)).toBe(t.answer);
  });

  it('draws operators in the proportions of the operator mix, and refuses anything but +, - and *', () => {
    const share = (ops: string | undefined, op: string): number => {
      const tasks = makeTasks({ n: 3000, seed: 5, split: 'train', ops });
      return tasks.filter((t) => t.question.slice(1).includes(op)).length / tasks.length;
    };
    expect(share(undefined, '*')).toBeCloseTo(1 / 3, 1);
    expect(share('+-**', '*')).toBeCloseTo(1 / 2, 1);
    expect(share('+-**', '+')).toBeCloseTo(1 / 4, 1);
    expect(share('*', '*')).toBe(1);
    for (const bad of ['', '+/', '+ -', 'x'])
      expect(() => parseOps(bad)).toThrow(/may hold only \+, - and \*.*e\.g\. \+-\*\*/);
  });
});
