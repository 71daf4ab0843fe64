/**
 * `npm run bench`: compare + report on a realistic worst case, measured as a user runs it
 * (a fresh `loadgate compare` process): 3 repeats per side, a bounded and an unbounded
 * test, 90-minute runs at 5 s resolution, 60 API handlers and 80 store methods.
 * Prints wall time and peak RSS. Target: under 5 s and under 300 MB on a 2-core machine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { syntheticRun, type CommonSpec } from './lib/synthetic-runs.ts';

const REPEATS = 3;
const common: CommonSpec = {
  system: 'mattermost',
  provenance: { kind: 'reconstructed', note: 'benchmark input' },
  bench: { kind: 'aws', versions: { engine: 'k6 v1.4.2' } },
  handlers: Array.from({ length: 60 }, (_, i) => `apiHandler${String(i).padStart(2, '0')}`),
  storeMethods: Array.from({ length: 80 }, (_, i) => `Store.method${String(i).padStart(2, '0')}`),
  stepSec: 5,
};

const dir = await mkdtemp(join(tmpdir(), 'loadgate-bench-'));
try {
  const files: Record<'baseline' | 'candidate', string[]> = { baseline: [], candidate: [] };
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    for (const [side, version, factor] of [['baseline', 'v1.0.0', 1], ['candidate', 'v1.1.0', 1.01]] as const) {
      for (const type of ['bounded', 'unbounded'] as const) {
        const run =
          type === 'bounded'
            ? syntheticRun(common, { type, name: 'bounded', version, repeat, seed: 'bench', users: 7500, rampUpSec: 900, durationSec: 5400, errors: 5000, apiFactor: factor })
            : syntheticRun(common, { type, name: 'unbounded', version, repeat, seed: 'bench', maxUsers: 20000, supportedUsers: 17000 + repeat * 50, stabilityWindowSec: 1800, durationSec: 5400, errors: 200000, apiFactor: factor });
        const file = join(dir, `${side}-${type}-${repeat}.json`);
        await writeFile(file, JSON.stringify(run));
        files[side].push(file);
      }
    }
  }
  const args = ['bin/loadgate.js', 'compare', '--baseline', ...files.baseline, '--candidate', ...files.candidate, '--out', join(dir, 'out')];
  const timed = existsSync('/usr/bin/time');
  const started = process.hrtime.bigint();
  const result = timed
    ? spawnSync('/usr/bin/time', ['-f', 'LOADGATE_BENCH %e %M', process.execPath, ...args], { encoding: 'utf8' })
    : spawnSync(process.execPath, args, { encoding: 'utf8' });
  const wallSec = Number(process.hrtime.bigint() - started) / 1e9;
  if (result.status !== 0 && result.status !== 1 && result.status !== 2) {
    console.error(result.stdout, result.stderr);
    throw new Error(`loadgate compare failed with exit code ${result.status}`);
  }
  const match = /LOADGATE_BENCH ([\d.]+) (\d+)/.exec(result.stderr ?? '');
  const peakMb = match ? Number(match[2]) / 1024 : Number.NaN;
  console.log(`input: ${REPEATS} repeats per side x 2 tests, 1081 points per series, 60 API handlers, 80 store methods`);
  console.log(`verdict: ${result.stdout.split('\n')[0]}`);
  console.log(`wall time: ${wallSec.toFixed(2)} s (target < 5 s)`);
  console.log(timed ? `peak RSS: ${peakMb.toFixed(0)} MB (target < 300 MB)` : 'peak RSS: not measured (install the Debian package "time")');
  if (wallSec >= 5 || peakMb >= 300) process.exitCode = 1;
} finally {
  await rm(dir, { recursive: true, force: true });
}
