/**
 * `npm run bench`: `loadgate compare` measured as a user runs it (a fresh process each
 * time, through bin/loadgate.js and tsx) on realistic runs: a bounded and an unbounded
 * test, 90-minute runs at 5 s resolution, 60 API handlers and 80 store methods.
 *   - the verdict alone (`--verdict-only`) after 2 pairs, what a gate pays between pairs;
 *   - the full report (verdict.json, README.md, 23 graphs) after 2 pairs;
 *   - the full report after 3 pairs, the worst case, once, for its peak RSS.
 * Medians over `--runs N` processes (default 5) of wall time and of CPU time (user +
 * system over every thread: the tsx loader, the GC and WebAssembly compilation run beside
 * the main thread, so CPU can exceed wall). On a shared machine wall time moves with the
 * load; CPU time much less. Targets on a 2-core machine: the verdict under 1 s, the
 * report under 3 s (wall medians), the worst case under 5 s and 300 MB.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { syntheticRun, type CommonSpec } from './lib/synthetic-runs.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs: a whole number of at least 1, not ${values.runs}`);

const common: CommonSpec = {
  system: 'mattermost',
  provenance: { kind: 'reconstructed', note: 'benchmark input' },
  bench: { kind: 'aws', versions: { engine: 'k6 v1.4.2' } },
  handlers: Array.from({ length: 60 }, (_, i) => `apiHandler${String(i).padStart(2, '0')}`),
  storeMethods: Array.from({ length: 80 }, (_, i) => `Store.method${String(i).padStart(2, '0')}`),
  stepSec: 5,
};

type Sides = Record<'baseline' | 'candidate', string[]>;

/** Run result files for `pairs` pairs of both tests; the candidate's API 1 % slower. */
async function writeRuns(dir: string, pairs: number): Promise<Sides> {
  const files: Sides = { baseline: [], candidate: [] };
  for (let repeat = 0; repeat < pairs; repeat++) {
    for (const [side, version, factor] of [
      ['baseline', 'v1.0.0', 1],
      ['candidate', 'v1.1.0', 1.01],
    ] as const) {
      for (const type of ['bounded', 'unbounded'] as const) {
        const run =
          type === 'bounded'
            ? syntheticRun(common, {
                type,
                name: 'bounded',
                version,
                repeat,
                seed: 'bench',
                users: 7500,
                rampUpSec: 900,
                durationSec: 5400,
                errors: 5000,
                apiFactor: factor,
              })
            : syntheticRun(common, {
                type,
                name: 'unbounded',
                version,
                repeat,
                seed: 'bench',
                maxUsers: 20000,
                supportedUsers: 17000 + repeat * 50,
                stabilityWindowSec: 1800,
                durationSec: 5400,
                errors: 200000,
                apiFactor: factor,
              });
        const file = join(dir, `${side}-${type}-${repeat}.json`);
        await writeFile(file, JSON.stringify(run));
        files[side].push(file);
      }
    }
  }
  return files;
}

interface Sample {
  wallSec: number;
  /** User + system CPU seconds of the process, NaN without /usr/bin/time. */
  cpuSec: number;
  peakMb: number;
  firstLine: string;
}

const timed = existsSync('/usr/bin/time');

function compareOnce(files: Sides, out: string, extra: readonly string[]): Sample {
  const args = ['bin/loadgate.js', 'compare', '--baseline', ...files.baseline, '--candidate', ...files.candidate, '--out', out, ...extra];
  const started = process.hrtime.bigint();
  const result = timed
    ? spawnSync('/usr/bin/time', ['-f', 'LOADGATE_BENCH %e %U %S %M', process.execPath, ...args], { encoding: 'utf8' })
    : spawnSync(process.execPath, args, { encoding: 'utf8' });
  const wallSec = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0 && result.status !== 1 && result.status !== 2) {
    console.error(result.stdout, result.stderr);
    throw new Error(`loadgate compare ${extra.join(' ')} failed with exit code ${result.status}`);
  }
  const match = /LOADGATE_BENCH ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(result.stderr ?? '');
  return {
    wallSec,
    cpuSec: match ? Number(match[2]) + Number(match[3]) : Number.NaN,
    peakMb: match ? Number(match[4]) / 1024 : Number.NaN,
    firstLine: result.stdout.split('\n')[0] ?? '',
  };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

const seconds = (xs: readonly number[]) => xs.map((x) => x.toFixed(2)).join(' ');

/** One line per mode; returns the median wall time. */
function report(label: string, samples: readonly Sample[], targetSec: number): number {
  const wall = median(samples.map((s) => s.wallSec));
  const cpu = timed ? `, CPU ${median(samples.map((s) => s.cpuSec)).toFixed(2)} s (${seconds(samples.map((s) => s.cpuSec))})` : '';
  const rss = timed ? `, peak RSS ${median(samples.map((s) => s.peakMb)).toFixed(0)} MB` : '';
  console.log(`${label}: median wall ${wall.toFixed(2)} s (${seconds(samples.map((s) => s.wallSec))}; target < ${targetSec} s)${cpu}${rss}`);
  return wall;
}

const dir = await mkdtemp(join(tmpdir(), 'loadgate-bench-'));
try {
  const twoPairs = await writeRuns(await mkdtemp(join(dir, 'two-')), 2);
  const threePairs = await writeRuns(await mkdtemp(join(dir, 'three-')), 3);
  const out = join(dir, 'out');
  // Alternated, so a change in the machine's load meets both modes alike.
  const verdictOnly: Sample[] = [];
  const full: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    verdictOnly.push(compareOnce(twoPairs, `${out}-verdict`, ['--verdict-only']));
    full.push(compareOnce(twoPairs, `${out}-report`, []));
  }
  const worst = compareOnce(threePairs, `${out}-worst`, []);

  console.log(`input: 2 tests (bounded, unbounded), 1081 points per series, 60 API handlers, 80 store methods; ${RUNS} process(es) per mode`);
  console.log(`verdict: ${full[0]?.firstLine}`);
  if (!timed) console.log('CPU time and peak RSS: not measured (install the Debian package "time")');
  const failed = [
    report('verdict only, 2 pairs (--verdict-only)', verdictOnly, 1) >= 1,
    report('full report, 2 pairs', full, 3) >= 3,
    report('full report, 3 pairs (worst case, 1 run)', [worst], 5) >= 5 || worst.peakMb >= 300,
  ];
  if (failed.some(Boolean)) process.exitCode = 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
