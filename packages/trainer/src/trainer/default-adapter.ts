import { TraceToTransitions } from '@agl/core/transitions';
import type { TraceAdapter } from '../algorithms/algorithm';

/** The trainer's default adapter: `TraceToTransitions` with AGL 0.3's defaults. */
export async function defaultAdapter(): Promise<TraceAdapter> {
  return new TraceToTransitions();
}
