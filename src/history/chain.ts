import type { HistoryCheck, HistoryRecord } from './record.ts';

/**
 * The recorded steps as a graph of releases (an edge from each gate's baseline to its
 * candidate) and the paths through it. A product's release branches share their older
 * releases and part after them, so the path from an anchor to a candidate follows the
 * candidate's own line: the ESR's steps never enter a chain to the main line, nor the
 * other way round. Where a release pair was gated more than once, its latest record stands.
 */

/** One step of a chain: a recorded gate, or the gate being judged. */
export interface ChainStep {
  baseline: string;
  candidate: string;
  checks: readonly HistoryCheck[];
}

/** The latest record of each release pair, keyed by its candidate. */
function edgesInto(records: readonly HistoryRecord[]): Map<string, HistoryRecord[]> {
  const latest = new Map<string, HistoryRecord>();
  for (const r of records) {
    if (r.baseline === r.candidate) continue; // an A/A gate is no step
    const key = `${r.baseline}\u0000${r.candidate}`;
    const seen = latest.get(key);
    if (!seen || Date.parse(seen.date) <= Date.parse(r.date)) latest.set(key, r);
  }
  const into = new Map<string, HistoryRecord[]>();
  for (const r of latest.values()) into.set(r.candidate, [...(into.get(r.candidate) ?? []), r]);
  // Latest first: among equally short paths the most recent steps are taken.
  for (const list of into.values()) list.sort((a, b) => Date.parse(b.date) - Date.parse(a.date));
  return into;
}

/**
 * Every release the recorded steps lead back from `release` to, nearest first (fewest
 * steps), each with the steps from it to `release`, oldest first. `release` itself is
 * first, with no steps. The path is chosen by its length alone, never by what its steps
 * measured, so choosing it cannot bias the chained estimate.
 */
export function ancestors(records: readonly HistoryRecord[], release: string): { release: string; steps: HistoryRecord[] }[] {
  const into = edgesInto(records);
  const out: { release: string; steps: HistoryRecord[] }[] = [{ release, steps: [] }];
  const seen = new Set([release]);
  for (let i = 0; i < out.length; i++) {
    const { release: at, steps } = out[i] as { release: string; steps: HistoryRecord[] };
    for (const r of into.get(at) ?? []) {
      if (seen.has(r.baseline)) continue;
      seen.add(r.baseline);
      out.push({ release: r.baseline, steps: [r, ...steps] });
    }
  }
  return out;
}

/** `*` any run of characters, `?` one; everything else literal. */
export function isAnchorPattern(setting: string): boolean {
  return /[*?]/.test(setting);
}

function patternRegExp(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`);
}

/** Where the creep is measured from, and the recorded steps from there to the baseline (null: no recorded path). */
export interface AnchorChoice {
  anchor: string | null;
  /** Recorded steps from the anchor to the gate's baseline, oldest first. */
  steps: HistoryRecord[] | null;
  /** Why there is no anchor, or why the path is missing. */
  why?: string;
}

/**
 * The anchor for a gate of `baseline` → `candidate`: the release the setting names, or
 * the last release matching its pattern on the baseline's line (the nearest before the
 * candidate, the baseline included), with the recorded steps from it to the baseline.
 */
export function chooseAnchor(setting: string, records: readonly HistoryRecord[], baseline: string, candidate: string): AnchorChoice {
  const back = ancestors(records, baseline).filter((a) => a.release !== candidate);
  if (!isAnchorPattern(setting)) {
    const found = back.find((a) => a.release === setting);
    return found
      ? { anchor: setting, steps: found.steps }
      : { anchor: setting, steps: null, why: `no recorded path from ${setting} to ${baseline} in the history` };
  }
  const match = patternRegExp(setting);
  const found = back.find((a) => match.test(a.release));
  if (!found) return { anchor: null, steps: null, why: `no release matching ${setting} before ${candidate} in the history` };
  return { anchor: found.release, steps: found.steps };
}

/** A check's cumulative change over some steps: the log ratios add, and so do their variances. */
export interface Chained {
  logRatio: number;
  variance: number;
  /** The degrees of freedom of the summed variance: the smallest of the steps'. */
  df: number;
  steps: number;
}

/**
 * The cumulative estimate of check `id` over `steps`, or why it cannot be formed (a step
 * that did not measure it). The steps' estimates come from different gates' runs, so their
 * errors are independent and their variances add. Their noise is not known independently:
 * every step's standard error scales with the one σ of the bench's noise model, so the
 * chain knows that σ no better than its least informed step, and takes the smallest of the
 * steps' degrees of freedom (Welch–Satterthwaite's ν, which treats each step's σ as its own,
 * would be larger: too sure of the sum).
 */
export function chainCheck(steps: readonly ChainStep[], id: string): Chained | { missing: string } {
  let logRatio = 0;
  let variance = 0;
  let df = Number.POSITIVE_INFINITY;
  for (const step of steps) {
    const c = step.checks.find((x) => x.id === id);
    if (!c) return { missing: `the step ${step.baseline} → ${step.candidate} recorded no estimate of it` };
    logRatio += c.logRatio;
    variance += c.se * c.se;
    df = Math.min(df, c.df);
  }
  return { logRatio, variance, df: Number.isFinite(df) ? df : 1, steps: steps.length };
}

/**
 * The candidate's line, oldest first, as far back as the records go (at most `limit`
 * steps): from each release, back along its latest recorded step.
 */
export function lineOf(records: readonly HistoryRecord[], candidate: string, limit = 40): HistoryRecord[] {
  const into = edgesInto(records);
  const line: HistoryRecord[] = [];
  const seen = new Set([candidate]);
  let at = candidate;
  while (line.length < limit) {
    const step = (into.get(at) ?? []).find((r) => !seen.has(r.baseline));
    if (!step) break;
    line.unshift(step);
    seen.add(step.baseline);
    at = step.baseline;
  }
  return line;
}
