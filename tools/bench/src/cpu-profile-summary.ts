import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** One line of {@link summarizeCpuProfile}. */
export interface ProfileHotspot {
  /** `function (file:line)`, the file shortened to its path after the repo or node_modules. */
  frame: string;
  /** Share of all samples spent in this frame itself. */
  selfShare: number;
  /** Share of samples where this frame is on the stack (each frame counted once per sample). */
  totalShare: number;
}

const shorten = (url: string): string => {
  const i = url.lastIndexOf('node_modules/');
  if (i >= 0) return url.slice(i + 'node_modules/'.length);
  const j = url.search(/(packages|adapters|tools|examples)\//);
  return j >= 0 ? url.slice(j) : url.replace(/^file:\/\//, '');
};

/**
 * Self and total time per frame of a V8 `.cpuprofile` (as written by `node --cpu-prof`), top `limit` by self time.
 * `(idle)` and `(program)` are listed like any frame, so the share of time the process waited shows too.
 */
export function summarizeCpuProfile(
  path: string,
  limit = 25,
): { hotspots: ProfileHotspot[]; samples: number; idleShare: number } {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: ProfileNode): string => {
    const name = n.callFrame.functionName || '(anonymous)';
    return n.callFrame.url ? `${name} (${shorten(n.callFrame.url)}:${n.callFrame.lineNumber + 1})` : name;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const samples = profile.samples ?? [];
  for (const id of samples) {
    const node = byId.get(id);
    if (!node) continue;
    const own = label(node);
    self.set(own, (self.get(own) ?? 0) + 1);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const l = label(byId.get(cur)!);
      if (seen.has(l)) continue;
      seen.add(l);
      total.set(l, (total.get(l) ?? 0) + 1);
    }
  }
  const n = Math.max(1, samples.length);
  const hotspots = [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, limit)
    .map(([frame, count]) => ({ frame, selfShare: count / n, totalShare: (total.get(frame) ?? count) / n }));
  return { hotspots, samples: samples.length, idleShare: (self.get('(idle)') ?? 0) / n };
}

/** The top frames by inclusive time (what a fix should target), excluding the root and idle frames. */
export function inclusiveHotspots(path: string, limit = 25): ProfileHotspot[] {
  const { hotspots } = summarizeCpuProfile(path, 100_000);
  return hotspots
    .filter((h) => !/^\((root|idle|program|garbage collector)\)/.test(h.frame))
    .sort((a, b) => b.totalShare - a.totalShare)
    .slice(0, limit);
}
