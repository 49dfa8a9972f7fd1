import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { canonicalJson, sha256Hex } from '@agl/core/transitions';
import { isRecord } from '@agl/core/guards';

/** One judge score. */
export interface JudgeScore {
  /** In [0, 1]. */
  reward: number;
  rationale: string;
}

/** Where judge answers are kept, keyed by {@link judgeCacheKey}. */
export interface JudgeCache {
  get(key: string): Promise<JudgeScore[] | undefined>;
  set(key: string, scores: JudgeScore[]): Promise<void>;
}

/**
 * The cache key of one judge call: SHA-256 of the mode, the model, the rubric and the transcript(s) in order. The same
 * conversation judged by the same model against the same rubric hits the cache; any change misses.
 */
export function judgeCacheKey(mode: 'rubric' | 'group', model: string, rubric: string, transcripts: readonly string[]) {
  return sha256Hex(canonicalJson({ mode, model, rubric, transcripts }));
}

/** An in-process cache (the default of `LlmJudge`). */
export class MemoryJudgeCache implements JudgeCache {
  readonly #map = new Map<string, JudgeScore[]>();
  async get(key: string): Promise<JudgeScore[] | undefined> {
    return this.#map.get(key);
  }
  async set(key: string, scores: JudgeScore[]): Promise<void> {
    this.#map.set(key, scores);
  }
}

/**
 * A JSONL file of `{ key, scores }` lines (`agl judge` uses `.agl/judge-cache.jsonl`): read once, appended to after
 * each paid call, so a re-run, even on another store, pays nothing for a conversation it judged before. Lines that do
 * not parse (a run killed mid-write) are skipped.
 */
export class FileJudgeCache implements JudgeCache {
  readonly path: string;
  #map: Map<string, JudgeScore[]> | null = null;

  constructor(path: string) {
    this.path = resolve(path);
  }

  async #load(): Promise<Map<string, JudgeScore[]>> {
    if (this.#map) return this.#map;
    const map = new Map<string, JudgeScore[]>();
    let text = '';
    try {
      text = await readFile(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const row = JSON.parse(line) as unknown;
        if (isRecord(row) && typeof row.key === 'string' && Array.isArray(row.scores))
          map.set(row.key, row.scores as JudgeScore[]);
      } catch {
        // a torn last line: ignore it, the call is paid again
      }
    }
    this.#map = map;
    return map;
  }

  async get(key: string): Promise<JudgeScore[] | undefined> {
    return (await this.#load()).get(key);
  }

  async set(key: string, scores: JudgeScore[]): Promise<void> {
    const map = await this.#load();
    map.set(key, scores);
    await mkdir(dirname(this.path), { recursive: true });
    await appendFile(this.path, `${JSON.stringify({ key, scores })}\n`, 'utf8');
  }
}
