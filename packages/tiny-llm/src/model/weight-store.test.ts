import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { useTempDirs } from '@agl/testing';
import { describe, expect, it } from 'vitest';
import { randomTestWeights } from '../__fixtures__/tool-model';
import { WeightStore } from './weight-store';

const temp = useTempDirs();

describe('WeightStore', () => {
  it('saves and loads versions bit-exactly, lists them in natural order, and never overwrites', async () => {
    const dir = await temp.make('agl-tiny-ws-');
    const store = new WeightStore({ dir });
    expect(await store.latest()).toBeUndefined();
    const w = randomTestWeights(1);
    for (const v of ['v10', 'v2', 'v1']) await store.save({ weights: w, version: v, meta: { note: v } });
    expect(await store.list()).toEqual(['v1', 'v2', 'v10']);
    expect(await store.latest()).toBe('v10');
    const back = await store.load('v2');
    expect(back.meta).toEqual({ note: 'v2' });
    expect(back.weights.config).toEqual(w.config);
    for (const [k, v] of Object.entries(w.params))
      expect(Buffer.from(back.weights.params[k]!.buffer).equals(Buffer.from(v.buffer))).toBe(true);
    await expect(store.save({ weights: w, version: 'v2' })).rejects.toThrow(/already exists/);
    await expect(store.load('v3')).rejects.toThrow(/known versions: v1, v2, v10/);
    await expect(store.save({ weights: w, version: '../evil' })).rejects.toThrow(/not valid/);
    await writeFile(join(dir, 'bad.agltiny'), 'garbage!!!!!!!');
    await expect(store.load('bad')).rejects.toThrow(/bad magic/);
  });
});
