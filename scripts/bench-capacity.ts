/**
 * The scale-free capacity search against load-test-ng's constant-step one, from the coordinator simulation
 * (src/coordinator/simulation): the real coordinator against capacity models fitted to the
 * local bench and to the ceiling-test seed, on a virtual clock with seeded noise. Every
 * figure is simulated; the bench figures come from scripts/bench-local.sh.
 *   npm run bench:capacity [-- --runs 24]
 */
import { parseArgs } from 'node:util';
import { loadGateConfig } from '../src/config/load.ts';
import type { GateConfig } from '../src/config/schema.ts';
import { estimateDuration } from '../src/aws/cost.ts';
import { expectedDuration } from '../src/aws/expected.ts';
import { resolveBench } from '../src/aws/presets.ts';
import { AWS, LOCAL, type Profile } from '../src/coordinator/simulation/profiles.ts';
import { forCeiling, simulateDuet, simulateMany, type SimSummary } from '../src/coordinator/simulation/simulate.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '24' } } });
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 2 || runs > 200) throw new Error('--runs: expected a whole number from 2 to 200');

const row = (label: string, s: SimSummary): string =>
  `  ${label.padEnd(34)} mean ${(100 * s.meanRatio).toFixed(1).padStart(5)} % of the model's ceiling, sd ${s.sdPct.toFixed(2).padStart(5)} %, ` +
  `time ${fmtSec(s.meanDurationSec)} (max ${fmtSec(s.maxDurationSec)}), converged ${s.converged}/${s.runs}` +
  (s.meanHalfWidthPct !== undefined ? `, own half-width ${s.meanHalfWidthPct.toFixed(2)} %` : '');

function fmtSec(sec: number): string {
  return sec >= 600 ? `${(sec / 60).toFixed(1)} min` : `${Math.round(sec)} s`;
}

async function profile(p: Profile, n: number): Promise<void> {
  console.log(
    `\n${p.name}: ceiling ${p.ceiling} users, ${p.model.rateWindowSec} s rate windows, noise sd ${p.model.noiseSd} per ${p.model.scrapeSec} s scrape (${n} seeded runs each)`,
  );
  const constant = await simulateMany({ model: p.model, ceiling: p.ceiling, test: p.constantStep }, n);
  const cold = await simulateMany({ model: p.model, ceiling: p.ceiling, test: p.scaleFree }, n);
  const warm = await simulateMany({ model: p.model, ceiling: p.ceiling, test: p.scaleFree, hint: p.ceiling }, n);
  console.log(row('constant step', constant));
  console.log(row('scale-free, cold start', cold));
  console.log(row('scale-free, warm start (right hint)', warm));
  for (const [label, hint] of [
    ['scale-free, hint 2x too high', 2 * p.ceiling],
    ['scale-free, hint 3x too low', p.ceiling / 3],
  ] as const) {
    console.log(row(label, await simulateMany({ model: p.model, ceiling: p.ceiling, test: p.scaleFree, hint }, n)));
  }
  const gate = (cold.meanDurationSec + warm.meanDurationSec) / (2 * constant.meanDurationSec);
  console.log(`  a gate's two unbounded runs (cold + warm) take ${(100 * gate).toFixed(0)} % of the constant-step time`);
}

async function machines(n: number): Promise<void> {
  console.log(`\nlocal profile on machines 0.3x-3x of the fitted one (${n} runs each):`);
  for (const factor of [0.3, 0.5, 1, 2, 3]) {
    const ceiling = Math.round(LOCAL.ceiling * factor);
    console.log(
      row(`${factor}x constant step (${ceiling} users)`, await simulateMany({ model: LOCAL.model, ceiling, test: forCeiling(LOCAL.constantStep, ceiling) }, n)),
    );
    console.log(row(`${factor}x scale-free, cold`, await simulateMany({ model: LOCAL.model, ceiling, test: forCeiling(LOCAL.scaleFree, ceiling) }, n)));
  }
}

async function ceilings(n: number): Promise<void> {
  console.log(`\ncold vs warm from 50 to 100,000 users (local search shape, 1 h budget, ${n} runs each):`);
  for (const ceiling of [50, 1000, 20_000, 100_000]) {
    const spec = { ...forCeiling(LOCAL.scaleFree, ceiling), maxDuration: 3600 };
    console.log(row(`${ceiling} cold`, await simulateMany({ model: LOCAL.model, ceiling, test: spec }, n)));
    console.log(row(`${ceiling} warm`, await simulateMany({ model: LOCAL.model, ceiling, test: spec, hint: ceiling }, n)));
  }
}

/**
 * Both sides of a duet of one version on a shared machine (a side that stops searching frees
 * 15 % for the other), one side's first alert early as a cold Synapse's can be: each side
 * stopping alone against one window for both.
 */
async function duets(n: number): Promise<void> {
  console.log(`\nduets of one version, one side alerting early, the machine shared (${n} seeded duets each):`);
  for (const joint of [false, true]) {
    const logs: number[] = [];
    let apart = 0;
    let longest = 0;
    for (let seed = 1; seed <= n; seed++) {
      const { results } = await simulateDuet({
        model: LOCAL.model,
        ceilings: [LOCAL.ceiling, LOCAL.ceiling],
        test: LOCAL.scaleFree,
        seeds: [2 * seed, 2 * seed + 1],
        joint,
        freedPct: 15,
        earlyAlert: { side: 0, seconds: 40, factor: 2 },
      });
      const [a, b] = results;
      logs.push(Math.log(b.supportedUsers / a.supportedUsers));
      apart = Math.max(apart, Math.abs(a.window.endSec - b.window.endSec), Math.abs(a.window.startSec - b.window.startSec));
      longest = Math.max(longest, a.durationSec, b.durationSec);
    }
    const mean = logs.reduce((x, y) => x + y, 0) / logs.length;
    const sd = Math.sqrt(logs.reduce((x, y) => x + (y - mean) ** 2, 0) / (logs.length - 1));
    console.log(
      `  ${(joint ? 'one window for both' : 'each side alone').padEnd(34)} ln(b/a) mean ${(100 * mean).toFixed(2)} %, sd ${(100 * sd).toFixed(2)} %, windows up to ${Math.round(apart)} s apart, longest ${fmtSec(longest)}`,
    );
  }
}

/** examples/aws-mattermost.yml with load-test-ng's search: no early stop, constant steps, the window mean. */
function constantStepConfig(config: GateConfig): GateConfig {
  return {
    ...config,
    tests: config.tests.map((t) => {
      if (t.type === 'bounded') {
        const { earlyStop: _, ...rest } = t;
        return rest;
      }
      const { climbPct: _c, ceilingStepPct: _s, warmStart: _w, holdHalfWidthPct: _h, ...rest } = t;
      return { ...rest, estimator: 'window-mean' as const, maxDuration: 4 * 3600 };
    }),
  };
}

async function plan(): Promise<void> {
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const bench = resolveBench(config.bench.aws, config.tests);
  console.log('\nexamples/aws-mattermost.yml, expected gate (1 run per side, empty database):');
  for (const [label, c] of [
    ['constant step', constantStepConfig(config)],
    ['scale-free', config],
  ] as const) {
    const upper = estimateDuration(c, bench, 'empty');
    const e = await expectedDuration(c, upper);
    console.log(
      `  ${label.padEnd(16)} expected ${fmtSec(e.totalSec)} (${(e.totalSec / 3600).toFixed(2)} bench-hours), longest run ${fmtSec(e.longestRunSec)}; upper bound ${fmtSec(upper.totalSec)}`,
    );
  }
}

const n = runs;
await profile(LOCAL, n);
await machines(Math.max(2, Math.round(n / 3)));
await ceilings(Math.max(2, Math.round(n / 6)));
await duets(Math.max(4, Math.round(n / 2)));
await profile(AWS, Math.max(2, Math.round(n / 4)));
await plan();
