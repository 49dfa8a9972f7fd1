import { ValidationError } from '../errors/index';
import type { Span } from '../schema/index';
import { SPAN_VIRTUAL, SPAN_VIRTUAL_ROOT } from '../semconv';

/** One node of a span tree. */
export interface TraceNode {
  /** The span id (`virtual-root` for the synthetic root). */
  id: string;
  /** The span; synthetic for virtual nodes. */
  span: Span;
  /** Children, in input order (repair appends moved nodes last). */
  children: TraceNode[];
  /** True for nodes made up by the tree builder (missing parents, the virtual root). */
  virtual: boolean;
}

function virtualSpan(id: string, name: string, template: Span, start: number | null, end: number | null): Span {
  return {
    rolloutId: template.rolloutId,
    attemptId: template.attemptId,
    sequenceId: template.sequenceId,
    traceId: template.traceId,
    spanId: id,
    parentId: null,
    name,
    status: { statusCode: 'UNSET', description: null },
    attributes: {},
    events: [],
    links: [],
    startTime: start,
    endTime: end,
    context: null,
    parent: null,
    resource: { attributes: {}, schemaUrl: '' },
  };
}

const minTime = (values: Array<number | null>): number | null => {
  const nums = values.filter((v): v is number => typeof v === 'number');
  return nums.length ? Math.min(...nums) : null;
};
const maxTime = (values: Array<number | null>): number | null => {
  const nums = values.filter((v): v is number => typeof v === 'number');
  return nums.length ? Math.max(...nums) : null;
};

/**
 * Builds the span tree (AGL 0.3 `TraceTree.from_spans`, reference §5.1). Children keep input order. A referenced but
 * missing parent becomes a virtual `agentlightning.virtual` node; several roots hang under a synthetic `virtual-root`.
 * Throws a `ValidationError` for an empty input or when every span sits in a cycle.
 */
export function buildTraceTree(spans: readonly Span[]): TraceNode {
  if (spans.length === 0) {
    throw new ValidationError("buildTraceTree: no spans to build a trace tree from; query the rollout's spans first.");
  }
  const nodes = new Map<string, TraceNode>();
  for (const span of spans) {
    if (!nodes.has(span.spanId)) nodes.set(span.spanId, { id: span.spanId, span, children: [], virtual: false });
  }
  const roots: TraceNode[] = [];
  const missing = new Map<string, TraceNode>();
  const seen = new Set<string>();
  for (const span of spans) {
    if (seen.has(span.spanId)) continue;
    seen.add(span.spanId);
    const node = nodes.get(span.spanId) as TraceNode;
    if (span.parentId === null || span.parentId === undefined || span.parentId === '') {
      roots.push(node);
      continue;
    }
    const parent = nodes.get(span.parentId);
    if (parent) {
      parent.children.push(node);
      continue;
    }
    let virtual = missing.get(span.parentId);
    if (!virtual) {
      virtual = {
        id: span.parentId,
        span: virtualSpan(span.parentId, SPAN_VIRTUAL, span, null, null),
        children: [],
        virtual: true,
      };
      missing.set(span.parentId, virtual);
    }
    virtual.children.push(node);
  }
  for (const virtual of missing.values()) {
    virtual.span.startTime = minTime(virtual.children.map((c) => c.span.startTime));
    virtual.span.endTime = maxTime(virtual.children.map((c) => c.span.endTime));
  }
  const allRoots = [...roots, ...missing.values()];
  if (allRoots.length === 0) {
    throw new ValidationError('buildTraceTree: the spans form a cycle (no span is a root); check the parent ids.');
  }
  if (allRoots.length === 1) return allRoots[0] as TraceNode;
  const first = allRoots[0] as TraceNode;
  const last = allRoots[allRoots.length - 1] as TraceNode;
  return {
    id: SPAN_VIRTUAL_ROOT,
    span: virtualSpan(SPAN_VIRTUAL_ROOT, SPAN_VIRTUAL_ROOT, first.span, first.span.startTime, last.span.endTime),
    children: allRoots,
    virtual: true,
  };
}

/** Pre-order depth-first walk. */
export function* walkTree(root: TraceNode): Generator<TraceNode> {
  const stack: TraceNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as TraceNode;
    yield node;
    for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i] as TraceNode);
  }
}

/** Max-segment tree over node end times (nodes sorted by start), to find enclosing candidates in O(log n). */
class EndIndex {
  readonly #size: number;
  readonly #tree: Float64Array;

  constructor(ends: readonly number[]) {
    let size = 1;
    while (size < ends.length) size *= 2;
    this.#size = size;
    this.#tree = new Float64Array(2 * size).fill(-Infinity);
    ends.forEach((e, i) => {
      this.#tree[size + i] = e;
    });
    for (let i = size - 1; i >= 1; i -= 1) {
      this.#tree[i] = Math.max(this.#tree[2 * i] as number, this.#tree[2 * i + 1] as number);
    }
  }

  /** The largest index ≤ `hi` whose end is ≥ `minEnd`, or -1. */
  findLast(hi: number, minEnd: number): number {
    if (hi < 0) return -1;
    const visit = (node: number, lo: number, up: number): number => {
      if (lo > hi || (this.#tree[node] as number) < minEnd) return -1;
      if (lo === up) return lo;
      const mid = (lo + up) >> 1;
      const right = visit(2 * node + 1, mid + 1, up);
      return right !== -1 ? right : visit(2 * node, lo, mid);
    };
    return visit(1, 0, this.#size - 1);
  }
}

/**
 * Re-attaches spans that mixed instrumentation hung on the outer root (AGL 0.3 `repair_hierarchy`, reference §5.2):
 * each child of the effective root moves under the node of the root's subtree that encloses it most tightly in time
 * (smallest strictly positive slack). Mutates and returns the tree. O(n log n) for typical traces.
 */
export function repairHierarchy(root: TraceNode): TraceNode {
  let node = root;
  while (node.children.length === 1) node = node.children[0] as TraceNode;
  // Moves stay inside this subtree, so its nodes and times are fixed; only parents change.
  const parentOf = new Map<TraceNode, TraceNode>();
  const timed: TraceNode[] = [];
  for (const n of walkTree(node)) {
    if (n !== node && n.span.startTime !== null && n.span.endTime !== null) timed.push(n);
    for (const c of n.children) parentOf.set(c, n);
  }
  timed.sort((a, b) => (a.span.startTime as number) - (b.span.startTime as number));
  const starts = timed.map((n) => n.span.startTime as number);
  const index = new EndIndex(timed.map((n) => n.span.endTime as number));
  const lastStartingBy = (t: number): number => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((starts[mid] as number) <= t) lo = mid + 1;
      else hi = mid;
    }
    return lo - 1;
  };
  const original = [...node.children];
  for (const child of original) {
    if (node.children.length <= 1) break;
    const cs = child.span.startTime;
    const ce = child.span.endTime;
    if (cs === null || ce === null) continue;
    let excluded: Set<TraceNode> | null = null;
    let best: TraceNode | null = null;
    let bestSlack = Infinity;
    for (let j = index.findLast(lastStartingBy(cs), ce); j >= 0; j = index.findLast(j - 1, ce)) {
      const lead = cs - (starts[j] as number);
      if (lead >= bestSlack) break;
      const candidate = timed[j] as TraceNode;
      const slack = (candidate.span.endTime as number) - ce + lead;
      if (slack <= 0 || slack >= bestSlack) continue;
      excluded ??= new Set<TraceNode>(walkTree(child));
      if (excluded.has(candidate)) continue;
      best = candidate;
      bestSlack = slack;
    }
    if (!best) continue;
    const parent = parentOf.get(child);
    if (!parent) continue;
    parent.children.splice(parent.children.indexOf(child), 1);
    best.children.push(child);
    parentOf.set(child, best);
  }
  return root;
}
