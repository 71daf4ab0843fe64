import { z } from 'zod';
import {
  afterInconclusive,
  atDefaultRates,
  goalShortfalls,
  simulate,
  simulationRow,
  SUPPORTED_USERS,
  type AfterInconclusive,
  type SimulationRow,
} from '../../compare/simulate.ts';
import { errorRatesOf } from '../../compare/sequential.ts';
import { loadGateConfig } from '../../config/load.ts';
import { assumedModel, loadNoiseModel, noiseModelPath } from '../../noise/model.ts';
import { gatingMetrics } from '../../noise/profile.ts';
import { InputError } from '../../util/errors.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const count = (what: string, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `expected a whole number of ${what}`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `expected 1 to ${max}`);

const simulateCommand = defineCommand({
  command: 'simulate',
  about: `Monte Carlo of the gate's own decision (the code compare and run use) at the noise
model's per-run spread: for no change, a change at the tolerance, at the material
regression and at 1.5 × it on each gating metric, a drifting bench and a bench whose
speed steps from one pair to the next, and benches the model does not describe (noise 1.5 ×
the model's, an unmodelled per-run factor shared by every metric), the share of pass / fail /
inconclusive verdicts and the runs per side it took (mean and max).
Seeded: the same inputs print the same table.`,
  flags: {
    config: flag.required('<gate.yml>', z.string({ error: 'required: the gate config file' }).min(1), 'Gate config'),
    noise: flag.optional('<file>', z.string().min(1), "Noise model (default: the config's noiseModel, else assumed from the tolerances)"),
    trials: flag.withDefault('<n>', count('trials', 100000), '1000', 'Simulated gates per row'),
    seed: flag.withDefault('<n>', count('seed', 2 ** 31), '1', 'PRNG seed'),
    'noise-scale': flag.optional(
      '<x | test.metric=x>',
      z
        .string()
        .regex(
          /^(?:([a-z][A-Za-z0-9_-]*\.[A-Za-z]+)=)?([0-9]+(?:\.[0-9]+)?)$/,
          'expected a multiple such as 3, or test.metric=3 (for example unbounded.supportedUsers=3)',
        )
        .transform((v) => {
          const at = v.lastIndexOf('=');
          return at < 0 ? { scale: Number(v) } : { metric: v.slice(0, at), scale: Number(v.slice(at + 1)) };
        })
        .refine((v) => v.scale >= 0.1 && v.scale <= 10, 'expected a multiple from 0.1 to 10'),
      "The bench's true noise as x times the model's (default 1: the model is right), on every gating metric or on one: what the gate does on a day the bench is noisier than it was calibrated",
    ),
    'slope-scale': flag.optional(
      '<x>',
      z
        .string()
        .regex(/^[0-9]+(?:\.[0-9]+)?$/, 'expected a multiple such as 0.5 or 2')
        .transform(Number)
        .refine((x) => x <= 10, 'expected a multiple from 0 to 10'),
      "For checks whose noise model has a speed fit (the local bench's CPU probe): the metric's true slope against the machine's speed as x times the fitted one (default 1; 0: the probe says nothing; 2: twice as steep)",
    ),
    continue: flag.optional(
      '<n>',
      z
        .string()
        .regex(/^\d+$/, 'expected a whole number of pairs, e.g. 3')
        .transform(Number)
        .refine((n) => n >= 1 && n <= 20, 'expected 1 to 20 pairs'),
      'Also show what becomes of the gates that end inconclusive: continued by n more pairs (run --resume --max-repeats), against started over as a new gate',
    ),
    json: flag.toggle('Print the rows and the goals as JSON'),
  },
  notes: 'Exit codes: 0 printed (goals met or not: see the output), 3 bad input.',
});

export const usage = simulateCommand.usage;

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = simulateCommand.parse(argv);
  const config = await loadGateConfig(flags.config);
  const path = flags.noise ?? noiseModelPath(config, flags.config);
  const model = path ? await loadNoiseModel(path, config) : assumedModel();
  const scale = flags['noise-scale'];
  if (scale?.metric) {
    const known = gatingMetrics(config)
      .filter((g) => !g.rate)
      .map((g) => `${g.test}.${g.key}`);
    if (!known.includes(scale.metric))
      throw new InputError(`--noise-scale: ${scale.metric} is not a gating relative metric of ${flags.config}; use one of ${known.join(', ')}`);
  }
  const slopeScale = flags['slope-scale'];
  const options = {
    trials: flags.trials,
    seed: flags.seed,
    noiseScale: scale?.scale ?? 1,
    ...(scale?.metric ? { noiseScaleMetric: scale.metric } : {}),
    ...(slopeScale !== undefined ? { slopeScale } : {}),
  };
  const rows = simulate(config, model, options);
  const rates = errorRatesOf(config);
  const shortfalls = goalShortfalls(rows, rates);
  const extra = flags.continue;
  const after = extra !== undefined ? afterInconclusive(config, model, extra, options) : null;
  // The same gate at 1 % and 1 %, beside the config's own rates.
  const defaults = atDefaultRates(config);
  const atDefaults = defaults ? simulate(defaults, model, options) : null;
  if (flags.json) {
    io.out(
      JSON.stringify(
        {
          config: flags.config,
          noiseModel: path,
          kind: model.kind,
          trials: flags.trials,
          seed: flags.seed,
          noiseScale: scale ?? { scale: 1 },
          slopeScale: slopeScale ?? 1,
          repeats: config.repeats,
          maxRepeats: config.maxRepeats,
          errorRates: config.errorRates,
          rows,
          shortfalls,
          ...(atDefaults ? { atDefaultRates: atDefaults } : {}),
          ...(after ? { afterInconclusive: after } : {}),
        },
        null,
        2,
      ),
    );
    return 0;
  }
  const noisier =
    (scale && scale.scale !== 1 ? `; the bench's true noise ${scale.scale} × the model's on ${scale.metric ?? 'every gating metric'}` : '') +
    (slopeScale !== undefined && slopeScale !== 1 ? `; the true speed slope ${slopeScale} × the fitted one` : '');
  const [ff, fp] = [config.errorRates.falseFailPct, config.errorRates.falsePassPct];
  io.out(
    `${flags.config}: noise model ${path ?? 'assumed from the tolerances'} (${model.kind}), ${config.repeats}..${config.maxRepeats} pairs, error rates ${ff} % false fail and ${fp} % false pass, ${flags.trials} trials per row, seed ${flags.seed}${noisier}`,
  );
  io.out(table(rows));
  if (atDefaults) io.out(beside(rows, atDefaults, ff, fp));
  if (after && extra !== undefined) io.out(afterText(after, config.maxRepeats, extra));
  if (!shortfalls.length)
    io.out(
      `Goals met: at the model, no change passes ≥ 96 % and fails ≤ ${ff} %, a material regression on any one gating metric fails ≥ 95 % and passes ≤ ${fp} %; on benches the model does not describe, no change fails ≤ ${ff} % and a material regression passes ≤ ${fp} %.`,
    );
  else {
    io.out(`Goals not met (${shortfalls.length}):`);
    for (const s of shortfalls) io.out(`  - ${s}`);
  }
  return 0;
}

/** The usual cases at the config's rates and at 1 % and 1 %: what looser rates buy in pairs and inconclusive gates. */
function beside(rows: readonly SimulationRow[], atDefaults: readonly SimulationRow[], ff: number, fp: number): string {
  const cell = (r: SimulationRow | undefined) =>
    r ? `${r.pass.toFixed(1)} / ${r.fail.toFixed(1)} / ${r.inconclusive.toFixed(1)} % (${r.meanPairs.toFixed(2)} pairs)` : '—';
  const pick = (rs: readonly SimulationRow[], kind: SimulationRow['kind'], metric: string | null) => simulationRow(rs, kind, metric);
  const lines = [`Pass / fail / inconclusive at ${ff} % / ${fp} % (this config) and at 1 % / 1 %:`];
  lines.push(`  no change: ${cell(pick(rows, 'none', null))} against ${cell(pick(atDefaults, 'none', null))}`);
  if (pick(rows, 'material', SUPPORTED_USERS))
    lines.push(
      `  material loss of supported users: ${cell(pick(rows, 'material', SUPPORTED_USERS))} against ${cell(pick(atDefaults, 'material', SUPPORTED_USERS))}`,
    );
  return lines.join('\n');
}

function afterText(after: readonly AfterInconclusive[], maxRepeats: number, extra: number): string {
  const rates = (r: { pass: number; fail: number; inconclusive: number; meanPairs: number }) =>
    `${r.pass.toFixed(1)} / ${r.fail.toFixed(1)} / ${r.inconclusive.toFixed(1)} % (${r.meanPairs.toFixed(2)} pairs)`;
  const lines = [
    `An inconclusive gate (pass / fail / inconclusive): as configured (at most ${maxRepeats} pairs); continued by up to ${extra} more pairs, one test over every pair; started over as a new gate of at most ${maxRepeats}:`,
  ];
  for (const a of after) lines.push(`  ${a.label}: ${rates(a.once)}; continued ${rates(a.continued)}; started over ${rates(a.restarted)}`);
  return lines.join('\n');
}

function table(rows: readonly SimulationRow[]): string {
  const header = ['true change', 'metric', 'pass %', 'fail %', 'inconclusive %', 'runs/side mean', 'max'];
  const lines = rows.map((r) => [
    r.kind === 'none' || r.kind === 'drift' || r.kind === 'step' ? r.label : `${r.label} (${Number(r.changePct.toFixed(2))}%)`,
    r.metric ?? 'all',
    r.pass.toFixed(1),
    r.fail.toFixed(1),
    r.inconclusive.toFixed(1),
    r.meanPairs.toFixed(2),
    String(r.maxPairs),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] as string).length)));
  const fmt = (cells: readonly string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [fmt(header), fmt(widths.map((w) => '-'.repeat(w))), ...lines.map(fmt)].join('\n');
}
