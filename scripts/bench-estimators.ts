/**
 * `npm run bench:estimators [-- <calibration dir>...]`: candidate estimators of supported
 * users, compared on runs already taken. Every unbounded run of the given calibrations (default:
 * the local ones the shipped noise model pools, scripts/make-noise-models.ts) is
 * re-estimated from its stored series by the estimators in scripts/lib/estimator-study.ts,
 * and the run-to-run spread of each is printed beside the shipped hold mean's: as
 * measured, and at one machine speed (the decision's speed fit, where the runs carry one
 * probe workload). Also printed: the hold mean's own standard error (from its batch-means
 * interval) and the spread of the runs' workload mix. Reads only committed files.
 */
import { mean } from '../src/util/stats.ts';
import { LOCAL_CALIBRATIONS } from './make-noise-models.ts';
import {
  ESTIMATOR_DESCRIPTIONS,
  ESTIMATORS,
  loadCalibration,
  RATE_WINDOW_SEC,
  pooledPct,
  spreadAtOneSpeedPct,
  spreadPct,
  type EstimatorName,
  type Calibration,
} from './lib/estimator-study.ts';

const fmt = (x: { sdPct: number; df: number } | undefined): string => (x ? `${x.sdPct.toFixed(2).padStart(5)} % (${x.df} df)` : '–'.padStart(13));
const rms = (xs: readonly number[]): number => Math.sqrt(xs.reduce((a, x) => a + x * x, 0) / xs.length);

const args = process.argv.slice(2);
const dirs = args.length ? args : [...LOCAL_CALIBRATIONS];
const calibrations: Calibration[] = [];
for (const dir of dirs) {
  const c = await loadCalibration(dir, RATE_WINDOW_SEC);
  if (c) calibrations.push(c);
  else if (args.length) throw new Error(`${dir}: fewer than 3 completed unbounded runs under results/; give a calibration folder of the unbounded test`);
}
if (!calibrations.length) throw new Error('no calibration with 3 or more completed unbounded runs');

console.log('Estimators (per-run spread = sd of ln(users), %, n − 1 df):');
for (const name of ESTIMATORS) console.log(`  ${name.padEnd(15)} ${ESTIMATOR_DESCRIPTIONS[name]}`);

const raw: Record<EstimatorName, Array<{ sdPct: number; df: number } | undefined>> = Object.fromEntries(ESTIMATORS.map((e) => [e, []])) as never;
const atSpeed: typeof raw = Object.fromEntries(ESTIMATORS.map((e) => [e, []])) as never;
const allSe: number[] = [];
for (const c of calibrations) {
  const se = c.runs.flatMap((r) => (r.holdSePct !== undefined ? [r.holdSePct] : []));
  allSe.push(...se);
  const mix = spreadPct(c.mix);
  console.log(`\n${c.dir}: ${c.runs.length} runs`);
  console.log(
    `  hold mean's own standard error: rms ${se.length ? rms(se).toFixed(2) : '–'} % over ${se.length} runs; ` +
      `workload-mix index: spread ${mix ? mix.sdPct.toFixed(2) : '–'} %`,
  );
  console.log(`  ${'estimator'.padEnd(15)} ${'mean users'.padStart(10)}  ${'spread'.padStart(13)}  ${'at one speed'.padStart(13)}  slope`);
  for (const name of ESTIMATORS) {
    const values = c.runs.flatMap((r) => (r.estimates[name] !== undefined ? [r.estimates[name] as number] : []));
    // An estimator that failed on some run is not compared on the others.
    const s = values.length === c.runs.length ? spreadPct(values) : undefined;
    const speed = spreadAtOneSpeedPct(c.runs, name);
    raw[name].push(s);
    atSpeed[name].push(speed);
    console.log(`  ${name.padEnd(15)} ${mean(values).toFixed(2).padStart(10)}  ${fmt(s)}  ${fmt(speed)}  ${speed ? speed.slope.toFixed(2) : ''}`);
  }
  const holdAtSpeed = atSpeed['hold-mean'].at(-1);
  if (holdAtSpeed && se.length) {
    const level = Math.sqrt(Math.max(0, holdAtSpeed.sdPct ** 2 - rms(se) ** 2));
    console.log(`  hold-mean at one speed: ${holdAtSpeed.sdPct.toFixed(2)} % = the hold's own error and a level of ${level.toFixed(2)} % (in quadrature)`);
  }
}

console.log(`\nPooled over ${calibrations.length} calibration(s) (variances weighted by df; at one speed, each calibration's own fit):`);
console.log(`  ${'estimator'.padEnd(15)} ${'spread'.padStart(13)}  ${'at one speed'.padStart(13)}`);
for (const name of ESTIMATORS) console.log(`  ${name.padEnd(15)} ${fmt(pooledPct(raw[name]))}  ${fmt(pooledPct(atSpeed[name]))}`);

// What a longer hold could remove: the hold mean's own error. The rest is each run's level.
const holdSpread = pooledPct(raw['hold-mean']);
if (allSe.length && holdSpread) {
  const se = rms(allSe);
  const level = Math.sqrt(Math.max(0, holdSpread.sdPct ** 2 - se ** 2));
  console.log(
    `\nhold-mean: ${holdSpread.sdPct.toFixed(2)} % per run = the hold's own error (rms ${se.toFixed(2)} % over ${allSe.length} runs), ` +
      `which a longer hold shrinks, and the runs' own level, ${level.toFixed(2)} %, which it does not (in quadrature)`,
  );
}
