/**
 * Each unbounded duet of recorded gates, side by side: both sides' measured windows (seconds
 * into their tests, and how far apart they lay in wall-clock time), where each search
 * started, their supported users, and the duet's change ln(candidate / baseline): what a
 * first gate's soundness is read from (docs/research/2026-11-29-one-window-first-gate.md).
 *   npx tsx scripts/duet-windows.ts <out> [<out>...]
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRunResult } from '../src/results/load.ts';
import type { RunResult } from '../src/results/schema.ts';

type Run = RunResult & { role: 'baseline' | 'candidate' };

/** The gate's run results, with the side each ran as (its file name says). */
async function runs(out: string): Promise<Run[]> {
  const dir = join(out, 'results');
  const files = (await readdir(dir)).filter((f) => /^(baseline|candidate)-.*\.json$/.test(f)).sort();
  return Promise.all(
    files.map(async (f) => ({
      ...parseRunResult(JSON.parse(await readFile(join(dir, f), 'utf8')), f),
      role: f.startsWith('baseline-') ? ('baseline' as const) : ('candidate' as const),
    })),
  );
}

const abs = (r: RunResult, sec: number): number | undefined => (r.testStartedAt ? Date.parse(r.testStartedAt) / 1000 + sec : undefined);
const fmt = (x: number | undefined, digits = 0): string => (x === undefined ? '-' : x.toFixed(digits));
const start = (r: RunResult): string => {
  const c = r.capacity;
  if (!c) return '-';
  const source = c.startSource.startsWith("the profile's") ? 'profile capacity' : /run \d+$/.test(c.startSource) ? 'this gate' : c.startSource;
  return `${c.startUsers} (${source})`;
};

const rows: string[] = [
  '| gate | duet | slot a: side, window (s), start, users | slot b: side, window (s), start, users | apart start/end (s) | Δ users | judged |',
  '| --- | --- | --- | --- | --- | --- | --- |',
];
for (const out of process.argv.slice(2)) {
  const all = (await runs(out)).filter((r) => r.test.type === 'unbounded' && r.duet);
  const keys = [...new Set(all.map((r) => `${r.repeat}`))].sort();
  for (const key of keys) {
    const duetRuns = all.filter((r) => `${r.repeat}` === key);
    // A duet not judged and its re-run share a repeat: pair them by start time.
    const byStart = new Map<string, Run[]>();
    for (const r of duetRuns)
      byStart.set(r.testStartedAt?.slice(0, 16) ?? r.startedAt.slice(0, 16), [
        ...(byStart.get(r.testStartedAt?.slice(0, 16) ?? r.startedAt.slice(0, 16)) ?? []),
        r,
      ]);
    for (const pair of byStart.values()) {
      const a = pair.find((r) => r.duet?.slot === 'a');
      const b = pair.find((r) => r.duet?.slot === 'b');
      if (!a || !b) continue;
      const baseline = a.role === 'baseline' ? a : b;
      const side = (r: Run) =>
        `${r.role} ${r.target.version}, ${fmt(r.stableWindow.startSec)}-${fmt(r.stableWindow.endSec)}, ${start(r)}, ${fmt(r.supportedUsers, 2)}`;
      const apart = [abs(a, a.stableWindow.startSec), abs(b, b.stableWindow.startSec), abs(a, a.stableWindow.endSec), abs(b, b.stableWindow.endSec)];
      const apartText = apart.every((x) => x !== undefined) ? `${fmt(Math.abs(apart[0]! - apart[1]!), 1)} / ${fmt(Math.abs(apart[2]! - apart[3]!), 1)}` : '-';
      const candidate = a === baseline ? b : a;
      const delta =
        a.supportedUsers && b.supportedUsers ? 100 * Math.log((candidate.supportedUsers as number) / (baseline.supportedUsers as number)) : undefined;
      rows.push(
        `| ${out.split('/').slice(-2).join('/')} | ${Number(key) + 1} | ${side(a)} | ${side(b)} | ${apartText} | ${delta === undefined ? '-' : `${delta >= 0 ? '+' : ''}${delta.toFixed(2)} %`} | ${a.disturbed ? 'no' : 'yes'} |`,
      );
    }
  }
}
console.log(rows.join('\n'));
