import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '@agl/testing';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDataset } from './load-dataset';

describe('loadDataset', () => {
  const temp = useTempDirs();
  let dir: string;
  beforeAll(async () => {
    dir = await temp.make('agl-ds-');
  });

  it('accepts arrays, iterables and async iterables', async () => {
    expect(await loadDataset([1, 2])).toEqual([1, 2]);
    expect(await loadDataset(new Set(['a', 'b']))).toEqual(['a', 'b']);
    async function* gen(): AsyncGenerator<{ n: number }> {
      yield { n: 1 };
      yield { n: 2 };
    }
    expect(await loadDataset(gen())).toEqual([{ n: 1 }, { n: 2 }]);
    expect(await loadDataset(undefined)).toEqual([]);
  });

  it('reads .json arrays and .jsonl files, naming the bad line', async () => {
    await writeFile(join(dir, 'a.json'), '[{"q":1},{"q":2}]');
    await writeFile(join(dir, 'b.jsonl'), '{"q":1}\n\n{"q":2}\n');
    await writeFile(join(dir, 'bad.jsonl'), '{"q":1}\n{oops\n');
    await writeFile(join(dir, 'obj.json'), '{"q":1}');
    expect(await loadDataset(join(dir, 'a.json'))).toEqual([{ q: 1 }, { q: 2 }]);
    expect(await loadDataset(join(dir, 'b.jsonl'))).toEqual([{ q: 1 }, { q: 2 }]);
    await expect(loadDataset(join(dir, 'bad.jsonl'))).rejects.toThrow(/line 2 is not valid JSON/u);
    await expect(loadDataset(join(dir, 'obj.json'))).rejects.toThrow(/must hold a JSON array/u);
    await expect(loadDataset(join(dir, 'missing.jsonl'))).rejects.toThrow(/Cannot read dataset file/u);
  });
});
