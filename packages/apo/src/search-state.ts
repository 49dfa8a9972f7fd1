import type { RolloutMode } from '@agl/core';
import { BudgetExceededError } from '@agl/core/errors';
import type { ResolvedApoOptions, ApoEvent } from './apo-options';
import type { Candidate, CandidateScore } from './candidate';
import type { Evaluation, Evaluator } from './evaluator';
import type { SeededRandom } from './seeded-random';
import type { TextualGradient } from './textual-gradient';

/** A child that lost against its parent on the same batch and was dropped. */
export interface RejectedChild {
  version: string;
  parent: string;
  round: number;
  score: number;
  parentScore: number;
}

/** Shared state of one search (beam or reflective): candidates, scores, best so far, budget. */
export class SearchState {
  readonly options: ResolvedApoOptions;
  readonly evaluator: Evaluator;
  readonly gradient: TextualGradient;
  readonly random: SeededRandom;
  readonly train: unknown[];
  readonly val: unknown[];
  readonly signal: AbortSignal;
  readonly candidates = new Map<string, Candidate>();
  readonly scores = new Map<string, CandidateScore[]>();
  readonly rejectedWorseChildren: RejectedChild[] = [];
  best: Candidate;
  bestScore = Number.NEGATIVE_INFINITY;
  seedScore: number | null = null;
  budgetExhausted = false;
  roundsCompleted = 0;
  #counter = 0;
  readonly #untracedRounds = new Set<number>();

  constructor(o: {
    options: ResolvedApoOptions;
    evaluator: Evaluator;
    gradient: TextualGradient;
    random: SeededRandom;
    train: unknown[];
    val: unknown[];
    signal: AbortSignal;
    seed: Candidate;
  }) {
    this.options = o.options;
    this.evaluator = o.evaluator;
    this.gradient = o.gradient;
    this.random = o.random;
    this.train = o.train;
    this.val = o.val;
    this.signal = o.signal;
    this.best = o.seed;
    this.candidates.set(o.seed.version, o.seed);
  }

  /** Should the search stop before the next round? */
  get stopped(): boolean {
    return this.signal.aborted || this.budgetExhausted;
  }

  /** The next version string (`v1`, `v2`, …); assigned when an expansion is planned, so numbering is deterministic. */
  nextVersion(): string {
    this.#counter += 1;
    return `v${this.#counter}`;
  }

  emit(event: ApoEvent): void {
    this.options.onEvent?.(event);
  }

  /** Evaluate and record the score under the candidate. */
  async evaluate(candidate: Candidate, tasks: readonly unknown[], mode: RolloutMode, key: string): Promise<Evaluation> {
    const ev = await this.evaluator.evaluate(candidate, tasks, mode, key);
    this.#warnIfUntraced(key, ev);
    const list = this.scores.get(candidate.version) ?? [];
    list.push({ key, score: ev.score, n: ev.experiments.length });
    this.scores.set(candidate.version, list);
    return ev;
  }

  /**
   * Once per round: when none of the evaluated rollouts holds an LLM span, the critique model would read empty
   * `<experiment>` blocks, so say how to trace the agent (a Node warning, plus an `untraced` event).
   */
  #warnIfUntraced(key: string, ev: Evaluation): void {
    const round = Number(/^r(\d+)\//u.exec(key)?.[1] ?? 0);
    if (ev.experiments.length === 0 || this.#untracedRounds.has(round)) return;
    if (ev.experiments.some((e) => e.messages.length > 0)) return;
    this.#untracedRounds.add(round);
    const message =
      `APO ${round === 0 ? 'seed validation' : `round ${round}`}: none of the ${ev.experiments.length} rollouts it evaluated holds an LLM span, ` +
      "so the critique model sees no conversation and optimises blind. Trace the agent's LLM calls with the preload of " +
      'its framework: `node --import @agl/openai/register train.js` (or @agl/langchain/register, ' +
      '@agl/openai-agents/register, @agl/vercel-ai/register); with the CLI, ' +
      '`NODE_OPTIONS="--import @agl/openai/register" npx agl train entry.ts --algorithm apo`.';
    process.emitWarning(message, { code: 'AGL_APO_UNTRACED' });
    this.emit({ type: 'untraced', round, rollouts: ev.experiments.length, message });
  }

  /** Keep `candidate` as the best when `score` is strictly greater. */
  offerBest(candidate: Candidate, score: number): void {
    if (score > this.bestScore) {
      this.best = candidate;
      this.bestScore = score;
    }
  }

  /**
   * Create a candidate: the template an earlier run stored under this version wins (resume); otherwise `produce`
   * asks the models. A failed edit (error, empty answer) is skipped; a spent budget stops the search.
   */
  async makeCandidate(
    o: Omit<Candidate, 'template'> & { produce: () => Promise<string | null> },
  ): Promise<Candidate | null> {
    let template = await this.evaluator.storedTemplate(o.version);
    if (template === null) {
      if (this.budgetExhausted) return null;
      try {
        template = await o.produce();
      } catch (err) {
        if (BudgetExceededError.isInstance(err)) {
          if (!this.budgetExhausted) this.emit({ type: 'budget-exhausted', message: err.message });
          this.budgetExhausted = true;
          return null;
        }
        this.emit({
          type: 'edit-failed',
          parent: o.parent ?? '',
          round: o.round,
          reason: err instanceof Error ? err.message : String(err),
        });
        return null;
      }
      if (template === null) {
        this.emit({
          type: 'edit-failed',
          parent: o.parent ?? '',
          round: o.round,
          reason: 'no critique or an empty edit',
        });
        return null;
      }
    }
    const { produce: _produce, ...rest } = o;
    const candidate: Candidate = { ...rest, template };
    this.candidates.set(candidate.version, candidate);
    await this.evaluator.publish(candidate);
    this.emit({
      type: 'candidate',
      version: candidate.version,
      parent: candidate.parent,
      round: candidate.round,
      origin: candidate.origin === 'merge' ? 'merge' : 'edit',
    });
    return candidate;
  }
}
