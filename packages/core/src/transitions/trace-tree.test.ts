import { describe, expect, it } from 'vitest';
import { ValidationError } from '../errors/index';
import { makeSpans, type SpanSpec } from './__fixtures__/span-builders';
import { buildTraceTree, repairHierarchy, walkTree } from './trace-tree';

describe('buildTraceTree (checklist 36)', () => {
  it('puts two parentless roots under a virtual-root spanning first start to last end', () => {
    const root = buildTraceTree(
      makeSpans([
        { id: 'a', name: 'first', start: 1, end: 4 },
        { id: 'b', name: 'second', start: 2, end: 9 },
      ]),
    );
    expect(root.id).toBe('virtual-root');
    expect(root.span.name).toBe('virtual-root');
    expect(root.children.map((c) => c.id)).toEqual(['a', 'b']);
    expect(root.span.startTime).toBe(1);
    expect(root.span.endTime).toBe(9);
  });

  it("makes a virtual agentlightning.virtual parent for a missing parent, with the child's rollout id", () => {
    const root = buildTraceTree(
      makeSpans([{ id: 'c', parent: 'ghost', name: 'child', start: 3, end: 5, rolloutId: 'ro-xyz' }]),
    );
    expect(root.id).toBe('ghost');
    expect(root.virtual).toBe(true);
    expect(root.span.name).toBe('agentlightning.virtual');
    expect(root.span.rolloutId).toBe('ro-xyz');
    expect(root.span.attributes).toEqual({});
    expect([root.span.startTime, root.span.endTime]).toEqual([3, 5]);
    expect(root.children[0]?.id).toBe('c');
  });

  it('lists real roots before missing parents under the virtual root', () => {
    const root = buildTraceTree(
      makeSpans([
        { id: 'orphan', parent: 'missing', name: 'x', start: 0, end: 1 },
        { id: 'real', name: 'y', start: 2, end: 3 },
      ]),
    );
    expect(root.children.map((c) => c.id)).toEqual(['real', 'missing']);
  });

  it('rejects an empty input and a pure cycle', () => {
    expect(() => buildTraceTree([])).toThrow(ValidationError);
    expect(() =>
      buildTraceTree(
        makeSpans([
          { id: 'a', parent: 'b', name: 'a', start: 0, end: 1 },
          { id: 'b', parent: 'a', name: 'b', start: 0, end: 1 },
        ]),
      ),
    ).toThrow(/cycle/);
  });
});

describe('repairHierarchy', () => {
  /** The tree of `specs`, repaired. */
  const repaired = (specs: SpanSpec[]) => {
    const root = buildTraceTree(makeSpans(specs));
    repairHierarchy(root);
    return root;
  };
  /** Ids of the children of node `id`. */
  const childIds = (root: ReturnType<typeof buildTraceTree>, id: string) =>
    [...walkTree(root)].find((n) => n.id === id)?.children.map((c) => c.id);

  it.each([
    {
      title: 'moves a child of the root under the tightest enclosing node',
      specs: [
        { id: 'root', name: 'root', start: 0, end: 10 },
        { id: 'outer', parent: 'root', name: 'outer', start: 1, end: 9 },
        { id: 'inner', parent: 'outer', name: 'inner', start: 2, end: 6 },
        { id: 'llm', parent: 'root', name: 'openai.chat.completion', start: 3, end: 4 },
      ],
      node: 'inner',
      rootChildren: ['outer'],
    },
    {
      title: 'descends through single-child wrappers and leaves deeper levels alone',
      specs: [
        { id: 'wrapper', name: 'w', start: 0, end: 20 },
        { id: 'real', parent: 'wrapper', name: 'r', start: 0, end: 10 },
        { id: 'agent', parent: 'real', name: 'agent', start: 1, end: 9 },
        { id: 'llm', parent: 'real', name: 'llm', start: 2, end: 3 },
      ],
      node: 'agent',
      rootChildren: null,
    },
  ])('$title', ({ specs, node, rootChildren }) => {
    const root = repaired(specs);
    expect(childIds(root, node)).toEqual(['llm']);
    if (rootChildren) expect(root.children.map((c) => c.id)).toEqual(rootChildren);
  });
});
