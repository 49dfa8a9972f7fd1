import { readFileSync } from 'node:fs';
import MiniSearch from 'minisearch';

/** One corpus document. */
export interface CorpusDoc {
  id: string;
  title: string;
  text: string;
}

/** One question with its accepted answers. */
export interface RagTask {
  id: string;
  question: string;
  answers: string[];
}

const dataFile = <T>(name: string): T =>
  JSON.parse(readFileSync(new URL(`../data/${name}`, import.meta.url), 'utf8')) as T;

/** The shipped corpus: 22 short documents about the (fictional) Velmora archipelago, so no model knows the answers. */
export const CORPUS: readonly CorpusDoc[] = dataFile<CorpusDoc[]>('corpus.json');
/** The shipped questions (16), each with its accepted answers. */
export const RAG_QUESTIONS: readonly RagTask[] = dataFile<RagTask[]>('questions.json');

/** A search hit. */
export interface SearchHit {
  id: string;
  title: string;
  text: string;
  score: number;
}

/**
 * BM25 search over a corpus with MiniSearch (BM25+ ranking, title boosted ×2, prefix and light fuzzy matching).
 *
 * @example
 * const index = new CorpusSearch();
 * index.search('population of Tarsk', 2); // [{ id: 'd02', … }, …]
 */
export class CorpusSearch {
  readonly #index: MiniSearch<CorpusDoc>;

  constructor(docs: readonly CorpusDoc[] = CORPUS) {
    this.#index = new MiniSearch<CorpusDoc>({ fields: ['title', 'text'], storeFields: ['title', 'text'] });
    this.#index.addAll([...docs]);
  }

  /** The top `k` documents for `query`. */
  search(query: string, k = 2): SearchHit[] {
    return this.#index
      .search(query, { boost: { title: 2 }, prefix: true, fuzzy: 0.1, combineWith: 'OR' })
      .slice(0, k)
      .map((r) => ({ id: String(r.id), title: String(r.title), text: String(r.text), score: r.score }));
  }
}

/** Hits as the tool returns them to the model: one `[id] title: text` line each. */
export function formatHits(hits: readonly SearchHit[]): string {
  return hits.length === 0 ? 'No documents found.' : hits.map((h) => `[${h.id}] ${h.title}: ${h.text}`).join('\n');
}
