import type { RunResult } from '../results/schema.ts';
import type { DiffNode, FunctionChange, ProfileDiff, StoredProfile } from '../results/profile.ts';
import { mean, median, normalQuantile, sampleVariance } from '../util/stats.ts';

/**
 * The profile diff of one test: each side's samples as CPU seconds per 1000 requests
 * served in the same window, by function, pooled over the pairs (duets) whose runs both
 * carry a profile, and each function's change judged against its noise.
 *
 * The rule, per function f with self samples on either side:
 * - change Δ = candidate − baseline, each side's samples pooled over the pairs (ratio of sums);
 * - it is judged on the per-pair changes as a share of the pair's baseline CPU per request
 *   (a duet's sides share the machine's speed, which the share cancels), their mean against
 *   the larger of the sampling noise (samples are Poisson: a count's variance is the count)
 *   and, with two pairs or more, the pair-to-pair spread (sample variance / pairs), so a
 *   change one pair alone carries is not a finding;
 * - z = Δ / √variance is then divided by √λ, λ = max(1, median z² / 0.455) over the
 *   functions with at least MIN_SAMPLES_FOR_DISPERSION samples (0.455 is the median of χ²₁;
 *   "genomic control"): most functions do not change, so a spread of z beyond 1 is noise
 *   neither count models (torn stacks, scheduling), and it widens every function's interval alike;
 * - significant when |z| exceeds the Bonferroni threshold for the m functions judged
 *   (two-sided, family-wise 5 %) and |Δ| is at least MATERIAL_PCT of the baseline's whole CPU
 *   per request: smaller changes cannot explain a verdict.
 */

const FAMILY_ALPHA = 0.05;
const MATERIAL_PCT = 1;
const MIN_SAMPLES_FOR_DISPERSION = 10;
const MEDIAN_CHI2_1 = 0.4549;
const TOP = 10;
/** Flame graph nodes under this share of the larger side's total are left out. */
const MIN_NODE_SHARE = 0.002;

interface SideRun {
  profile: StoredProfile;
  /** CPU-s per 1000 requests one sample stands for in this run. */
  perSample: number;
  /** Requests in thousands, scaled to the part of the window the profile covers. */
  kreq: number;
}

interface Pair {
  baseline: SideRun;
  candidate: SideRun;
}

const keyOf = (f: { name: string; file: string; line?: number }): string => `${f.name}\u0000${f.file}\u0000${f.line ?? ''}`;

function sideRun(run: RunResult): SideRun | string {
  const p = run.profile;
  if (!p) return `${run.target.version} repeat ${run.repeat} has no profile`;
  if (!(run.totals.requests > 0)) return `${run.target.version} repeat ${run.repeat} served no requests in its measured window`;
  const kreq = ((run.totals.requests / 1000) * p.coveredSec) / p.windowSec;
  return { profile: p, perSample: p.sampleSec / kreq, kreq };
}

/** Completed runs paired by repeat (a duet's two sides share it), each side with a profile and requests. */
function pairsOf(baseline: readonly RunResult[], candidate: readonly RunResult[], problems: string[]): Pair[] {
  const pairs: Pair[] = [];
  for (const b of baseline) {
    if (b.status !== 'completed') continue;
    const c = candidate.find((r) => r.repeat === b.repeat && r.status === 'completed');
    if (!c) continue;
    const [bs, cs] = [sideRun(b), sideRun(c)];
    if (typeof bs === 'string' || typeof cs === 'string') {
      problems.push(...[bs, cs].filter((x): x is string => typeof x === 'string'));
      continue;
    }
    pairs.push({ baseline: bs, candidate: cs });
  }
  return pairs;
}

/** Per function: self and total samples of one profile (a recursive function counts once per stack in total). */
function bySample(profile: StoredProfile): {
  self: Map<string, number>;
  total: Map<string, number>;
  sum: number;
  keys: Map<string, { name: string; file: string; line?: number }>;
} {
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const keys = new Map<string, { name: string; file: string; line?: number }>();
  let sum = 0;
  for (const s of profile.stacks) {
    sum += s.samples;
    const seen = new Set<string>();
    s.frames.forEach((i, at) => {
      const f = profile.frames[i] as StoredProfile['frames'][number];
      const k = keyOf(f);
      if (!keys.has(k)) keys.set(k, { name: f.name, file: f.file, ...(f.line !== undefined ? { line: f.line } : {}) });
      if (at === s.frames.length - 1) self.set(k, (self.get(k) ?? 0) + s.samples);
      if (!seen.has(k)) {
        seen.add(k);
        total.set(k, (total.get(k) ?? 0) + s.samples);
      }
    });
  }
  return { self, total, sum, keys };
}

type Counted = ReturnType<typeof bySample>;

interface Judged {
  key: string;
  z: number;
  samples: number;
}

/**
 * A function's z: its per-pair changes as a share of that pair's baseline CPU per request
 * (a duet's two sides share the machine, so a pair on a slower moment moves both alike;
 * the share cancels the machine's speed from pair to pair), their mean over its error.
 */
function judge(k: string, pairs: readonly Pair[], counted: readonly { b: Counted; c: Counted }[]): Judged {
  let poisson = 0;
  let samples = 0;
  let floor = Infinity;
  const perPair: number[] = [];
  pairs.forEach((p, i) => {
    const { b, c } = counted[i] as { b: Counted; c: Counted };
    const bs = b.self.get(k) ?? 0;
    const cs = c.self.get(k) ?? 0;
    const base = b.sum * p.baseline.perSample;
    samples += bs + cs;
    perPair.push((cs * p.candidate.perSample - bs * p.baseline.perSample) / base);
    poisson += (cs * p.candidate.perSample ** 2 + bs * p.baseline.perSample ** 2) / base ** 2;
    // One sample of noise at least: a function seen once on one side is no certainty.
    floor = Math.min(floor, Math.min(p.baseline.perSample, p.candidate.perSample) / base);
  });
  const n = perPair.length;
  const spread = n >= 2 ? sampleVariance(perPair) / n : 0;
  const variance = Math.max(poisson / n ** 2, spread, floor ** 2 / n);
  return { key: k, z: mean(perPair) / Math.sqrt(variance), samples };
}

/** CPU-s per 1000 requests of one side, pooled: Σ samples × CPU-s per sample ÷ Σ thousands of requests. */
function pooled(pairs: readonly Pair[], counted: readonly { b: Counted; c: Counted }[], side: 'b' | 'c', k: string | null, kind: 'self' | 'total'): number {
  let cpu = 0;
  let kreq = 0;
  pairs.forEach((p, i) => {
    const run = side === 'b' ? p.baseline : p.candidate;
    const c = (counted[i] as { b: Counted; c: Counted })[side];
    const n = k === null ? c.sum : (c[kind].get(k) ?? 0);
    cpu += n * run.perSample * run.kreq;
    kreq += run.kreq;
  });
  return cpu / kreq;
}

/** The diff of one test's profiles, or undefined when no pair has a profile on both sides. */
export function diffProfiles(baseline: readonly RunResult[], candidate: readonly RunResult[]): ProfileDiff | undefined {
  const problems: string[] = [];
  const pairs = pairsOf(baseline, candidate, problems);
  if (!pairs.length) return undefined;
  const counted = pairs.map((p) => ({ b: bySample(p.baseline.profile), c: bySample(p.candidate.profile) }));
  const names = new Map<string, { name: string; file: string; line?: number }>();
  for (const { b, c } of counted) for (const m of [b.keys, c.keys]) for (const [k, v] of m) names.set(k, v);
  const keys = [...names.keys()].filter((k) => counted.some(({ b, c }) => (b.self.get(k) ?? 0) + (c.self.get(k) ?? 0) > 0));
  const judged = keys.map((k) => judge(k, pairs, counted));
  const steady = judged.filter((j) => j.samples >= MIN_SAMPLES_FOR_DISPERSION).map((j) => j.z ** 2);
  const lambda = steady.length >= 10 ? Math.max(1, median(steady) / MEDIAN_CHI2_1) : 1;
  const zCrit = normalQuantile(1 - FAMILY_ALPHA / (2 * Math.max(1, judged.length)));
  const totalPerKReq = { baseline: pooled(pairs, counted, 'b', null, 'self'), candidate: pooled(pairs, counted, 'c', null, 'self') };
  const material = (MATERIAL_PCT / 100) * totalPerKReq.baseline;

  const changes: FunctionChange[] = judged.map((j) => {
    const z = Math.abs(j.z) / Math.sqrt(lambda);
    const selfPerKReq = { baseline: pooled(pairs, counted, 'b', j.key, 'self'), candidate: pooled(pairs, counted, 'c', j.key, 'self') };
    const change = selfPerKReq.candidate - selfPerKReq.baseline;
    return {
      ...(names.get(j.key) as { name: string; file: string; line?: number }),
      selfPerKReq,
      totalPerKReq: { baseline: pooled(pairs, counted, 'b', j.key, 'total'), candidate: pooled(pairs, counted, 'c', j.key, 'total') },
      change,
      changePctOfTotal: (change / totalPerKReq.baseline) * 100,
      candidateSharePct: (selfPerKReq.candidate / totalPerKReq.candidate) * 100,
      z,
      significant: z >= zCrit && Math.abs(change) >= material,
    };
  });
  const grown = changes
    .filter((c) => c.change > 0)
    .sort((a, b) => b.change - a.change)
    .slice(0, TOP);
  const shrunk = changes
    .filter((c) => c.change < 0)
    .sort((a, b) => a.change - b.change)
    .slice(0, TOP);
  const rule =
    `${pairs.length} pair${pairs.length === 1 ? '' : 's'}; a function counts when its change in own CPU per request exceeds ` +
    `${zCrit.toFixed(1)} standard errors (Bonferroni over ${judged.length} functions, 5 % family-wise; the error is the larger of the ` +
    `sampling noise${pairs.length >= 2 ? ' and the pair-to-pair spread' : ''}, widened ×${Math.sqrt(lambda).toFixed(2)} by the spread of all functions' changes) ` +
    `and ${MATERIAL_PCT} % of the baseline's CPU per request`;
  return { pairs: pairs.length, totalPerKReq, grown, shrunk, tree: mergedTree(pairs, totalPerKReq), rule, problems };
}

/** Both sides' stacks merged into one call tree, CPU-s per 1000 requests pooled over the pairs. */
function mergedTree(pairs: readonly Pair[], total: { baseline: number; candidate: number }): DiffNode {
  const root: DiffNode = { name: 'all', file: '', baseline: 0, candidate: 0, children: [] };
  const kreq = { baseline: pairs.reduce((n, p) => n + p.baseline.kreq, 0), candidate: pairs.reduce((n, p) => n + p.candidate.kreq, 0) };
  const index = new Map<DiffNode, Map<string, DiffNode>>();
  for (const p of pairs) {
    for (const side of ['baseline', 'candidate'] as const) {
      const run = p[side];
      const scale = (run.perSample * run.kreq) / kreq[side];
      for (const s of run.profile.stacks) {
        const add = s.samples * scale;
        let node = root;
        node[side] += add;
        for (const i of s.frames) {
          const f = run.profile.frames[i] as StoredProfile['frames'][number];
          const k = `${f.name}\u0000${f.file}`;
          let children = index.get(node);
          if (!children) index.set(node, (children = new Map()));
          let child = children.get(k);
          if (!child) {
            child = { name: f.name, file: f.file, baseline: 0, candidate: 0, children: [] };
            children.set(k, child);
            node.children.push(child);
          }
          child[side] += add;
          node = child;
        }
      }
    }
  }
  const min = MIN_NODE_SHARE * Math.max(total.baseline, total.candidate);
  const prune = (n: DiffNode): DiffNode => ({
    ...n,
    children: n.children
      .filter((c) => Math.max(c.baseline, c.candidate) >= min)
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.file < b.file ? -1 : a.file > b.file ? 1 : 0))
      .map(prune),
  });
  return prune(root);
}
