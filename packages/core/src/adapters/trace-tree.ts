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
    throw new ValidationError('buildTraceTree: no spans to build a trace tree from; query the rollout\'s spans first.');
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
      virtual = { id: span.parentId, span: virtualSpan(span.parentId, SPAN_VIRTUAL, span, null, null), children: [], virtual: true };
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

function subtreeIds(node: TraceNode): Set<string> {
  const ids = new Set<string>();
  for (const n of walkTree(node)) ids.add(n.id);
  return ids;
}

/**
 * Re-attaches spans that mixed instrumentation hung on the outer root (AGL 0.3 `repair_hierarchy`, reference §5.2):
 * each child of the effective root moves under the node of the root's subtree that encloses it most tightly in time.
 * Mutates and returns the tree.
 */
export function repairHierarchy(root: TraceNode): TraceNode {
  let node = root;
  while (node.children.length === 1) node = node.children[0] as TraceNode;
  const original = [...node.children];
  for (const child of original) {
    if (node.children.length <= 1) break;
    const cs = child.span.startTime;
    const ce = child.span.endTime;
    if (cs === null || ce === null) continue;
    const excluded = subtreeIds(child);
    let best: TraceNode | null = null;
    let bestSlack = Infinity;
    for (const candidate of walkTree(node)) {
      if (candidate === node || excluded.has(candidate.id)) continue;
      const ns = candidate.span.startTime;
      const ne = candidate.span.endTime;
      if (ns === null || ne === null || ns > cs || ne < ce) continue;
      const slack = ne - ce + (cs - ns);
      if (slack > 0 && slack < bestSlack) {
        best = candidate;
        bestSlack = slack;
      }
    }
    if (!best) continue;
    const parent = findParent(node, child);
    if (!parent) continue;
    parent.children.splice(parent.children.indexOf(child), 1);
    best.children.push(child);
  }
  return root;
}

function findParent(root: TraceNode, target: TraceNode): TraceNode | null {
  for (const n of walkTree(root)) if (n.children.includes(target)) return n;
  return null;
}
