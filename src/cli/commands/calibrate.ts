import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { noiseModelFileSchema } from '../../noise/schema.ts';
import type { RunOptions } from '../../bench/gate-plan.ts';
import { verdictFileSchema } from '../../results/verdict-schema.ts';
import { runGate } from '../../run/gate.ts';
import { parseRunOptions, runCommand } from '../../run/options.ts';
import { defineCommand, flag, section } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const gate = runCommand.flags;

const calibrateCommand = defineCommand({
  command: 'calibrate',
  about: `Measures the bench's noise: runs <v> on both sides, n pairs in the gate's counterbalanced
order (no early stop), and writes the per-run sd of ln(value) of every gating metric, with
its runs, degrees of freedom, version and date, to <out>/noise-model.json. The runs are one
version, so they are one group: an offset between the two sides counts as noise. The
config's noiseModel is neither used nor checked (it is stale after a profile change).`,
  flags: {
    config: gate.config,
    version: flag.required('<v>', z.string({ error: 'required: the version to run on both sides' }).min(1), 'The version run on both sides'),
    runs: flag.required(
      '<n>',
      z
        .string({ error: 'required: the number of pairs, e.g. --runs 4' })
        .regex(/^\d+$/, 'expected a whole number')
        .transform(Number)
        .refine((n) => n >= 2 && n <= 20, 'expected 2 to 20 pairs (one pair measures no spread)'),
      'Pairs to run, 2 to 20; use at least 3: with n pairs each metric gets 2n − 1 degrees of freedom (n − 1 in duet mode, where a pair is one duet)',
    ),
    out: gate.out,
    write: flag.toggle("Also write it over the config's noiseModel file"),
    tests: gate.tests,
    resume: flag.toggle(
      "Reuse the completed runs already in <out>/results: a stopped calibration goes on; a finished one runs nothing and writes its noise model again from the same runs, by this loadgate's rules",
    ),
    history: {
      ...gate.history,
      help: "Warm-start hints from the earlier run results in this folder, as for loadgate run; without it, only from this calibration's runs",
    },
    keep: gate.keep,
    'cache-dir': gate['cache-dir'],
    ...section('AWS bench', {
      'bench-file': gate['bench-file'],
      'users-file': gate['users-file'],
      'runner-limit': {
        ...gate['runner-limit'],
        help: 'One job of a multi-job calibration on runners with this job limit (whole minutes, 30 to 7200), as for loadgate run: the job budget is the limit less 20 minutes, or a lower --job-budget',
      },
      'job-budget': {
        ...gate['job-budget'],
        help: 'Start no run that would end after this long (e.g. 5h30m); the calibration then stops with exit 2 and the next job goes on with --resume',
      },
      'stop-early': flag.toggle(
        'The last job of a multi-job calibration: when the job budget leaves pairs to run, measure the model from the pairs completed (at least 2, 3 in duet mode) rather than none, and say how to continue it for the rest',
      ),
    }),
  },
  notes:
    'Exit codes: 0 model written (with --stop-early, possibly from fewer pairs than asked), 2 not measured yet (too few completed runs, or stopped by the job budget with pairs left: resume), 3 bad input.',
});

export const usage = calibrateCommand.usage;

const GATE_FLAGS = ['tests', 'resume', 'history', 'keep', 'cache-dir', 'bench-file', 'users-file', 'runner-limit', 'job-budget'] as const;

async function readVerdict(outDir: string) {
  return readFile(join(outDir, 'verdict.json'), 'utf8').then(
    (t) => verdictFileSchema.parse(JSON.parse(t)),
    () => undefined,
  );
}

/** The gate loop on the bench the options name; a test hands in one on a fake bench. */
type GateRunner = (o: RunOptions, io: CliIO) => Promise<number>;

export async function run(argv: string[], io: CliIO, runOn: GateRunner = runGate): Promise<number> {
  const flags = calibrateCommand.parse(argv);
  // The flags run shares are handed on as given (the two parsed to numbers, as run reads
  // them: whole minutes, and a bare number of seconds); the rest become run's own.
  const shared = GATE_FLAGS.flatMap((name) => {
    const value = flags[name];
    return value === undefined || value === false ? [] : value === true ? [`--${name}`] : [`--${name}`, String(value)];
  });
  const runArgs = [
    ...['--config', flags.config, '--baseline', flags.version, '--candidate', flags.version, '--out', flags.out],
    ...['--repeats', String(flags.runs), '--max-repeats', String(flags.runs)],
    ...shared,
    ...(flags.write ? ['--update-noise-model'] : []),
  ];
  const options = { ...(await parseRunOptions(runArgs)), calibrate: true };
  await runOn(options, io);
  // A job budget that ran out leaves pairs to run: the model so far is not the calibration's,
  // unless this is the last job, which stops early with the pairs it has.
  const verdict = await readVerdict(options.outDir);
  if (verdict?.next === 'repeat') {
    const done = verdict.decision.pairs;
    // What measures a model: 2 degrees of freedom, n − 1 from n duets, 2n − 1 from n pairs.
    const least = options.config.mode === 'duet' ? 3 : 2;
    if (!flags['stop-early'] || done < least) {
      io.out(`calibrate: ${done} of ${flags.runs} pairs done within the job budget; run it again with --resume and the same --out to go on`);
      return 2;
    }
    io.out(
      `calibrate: stopped early after ${done} of ${flags.runs} pairs (the job budget ran out in the last job): the model is measured from those ${done}; continue the calibration for the rest (--resume with --runs ${flags.runs}, or the workflow's continue-from)`,
    );
    // The completed pairs, as a calibration of that many: nothing is run again.
    const runs = runArgs.map((a, i) => (runArgs[i - 1] === '--repeats' || runArgs[i - 1] === '--max-repeats' ? String(done) : a));
    await runOn({ ...(await parseRunOptions([...runs, ...(runs.includes('--resume') ? [] : ['--resume'])])), calibrate: true }, io);
  }
  const file = join(options.outDir, 'noise-model.json');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) {
    io.out(`calibrate: fewer than two completed runs per side for any gating metric, so no noise was measured; see ${join(options.outDir, 'README.md')}`);
    return 2;
  }
  const model = noiseModelFileSchema.parse(JSON.parse(text));
  io.out(`noise model: ${file}${flags.write ? ` (also written over the config's noiseModel)` : ''}`);
  for (const e of model.entries) {
    // A duet model's sd is one duet's log ratio, over runs / 2 duets.
    const per = model.mode === 'duet' ? `per duet (${e.runs / 2} duets` : `per run (${e.runs} runs`;
    io.out(
      `  ${`${e.test}.${e.metric}`.padEnd(28)} ${e.kind === 'measured' ? `${(e.sdLog * 100).toFixed(2)}% ${per}, ${e.df} df)` : `assumed ${(e.sdLog * 100).toFixed(2)}%`}`,
    );
    if (e.speed) {
      io.out(
        `  ${''.padEnd(28)} at one machine speed: ${(e.speed.sdLog * 100).toFixed(2)}% per run (${e.speed.df} df), moving ${e.speed.slope.toFixed(2)}% per 1% of the speed probe's time`,
      );
    }
  }
  return 0;
}
