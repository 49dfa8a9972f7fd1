import type { LightningStore, NamedResourcesInput, Span, Trajectory } from '@agl/core';
import type { RolloutInfo } from '@agl/core/transitions';

/** Turns one attempt's spans into a trajectory (e.g. `TraceToTransitions` from `@agl/core/transitions`). */
export interface TraceAdapter {
  adapt(spans: readonly Span[], rollout?: RolloutInfo): Trajectory | Promise<Trajectory>;
}

/** What {@link Algorithm.run} receives from the trainer. */
export interface AlgorithmRunOptions {
  store: LightningStore;
  train: unknown[];
  val: unknown[];
  adapter: TraceAdapter;
  initialResources?: NamedResourcesInput;
  /** Aborted when the user interrupts the run. */
  signal: AbortSignal;
}

/**
 * A training algorithm (AGL 0.3 §8.1): enqueue rollouts, wait for them, read trajectories, post new resources. The
 * trainer stops its runners when `run` resolves.
 */
export interface Algorithm {
  readonly name?: string;
  run(options: AlgorithmRunOptions): Promise<void>;
}
