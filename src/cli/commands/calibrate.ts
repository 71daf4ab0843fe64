import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { noiseModelFileSchema } from '../../noise/schema.ts';
import { runGate } from '../../run/gate.ts';
import { parseRunOptions } from '../../run/options.ts';
import { parseFlags } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

export const usage = `Usage: loadgate calibrate --config <gate.yml> --version <v> --runs <n> --out <dir> [--write] [bench options]

Measures the bench's noise: runs <v> on both sides, n pairs in the gate's counterbalanced
order (no early stop), and writes the per-run sd of ln(value) of every gating metric, with
its runs, degrees of freedom, version and date, to <out>/noise-model.json. The runs are one
version, so they are one group: an offset between the two sides counts as noise. The
config's noiseModel is neither used nor checked (it is stale after a profile change).
  --write                  Also write it over the config's noiseModel file
  --tests <a,b>            Only these tests
  --resume                 Reuse the completed runs already in <out>/results: a stopped
                           calibration goes on; a finished one runs nothing and writes its
                           noise model again from the same runs, by this loadgate's rules
  --history <dir>          Warm-start hints from the earlier run results in this folder,
                           as for loadgate run; without it, only from this calibration's runs
  --bench-file, --users-file, --cache-dir, --keep   As for loadgate run
Use at least 3 pairs: with n pairs each metric gets 2n − 1 degrees of freedom.
Exit codes: 0 model written, 2 too few completed runs to measure, 3 bad input.`;

const flagsSchema = z.strictObject({
  config: z.string({ error: 'required: the gate config file' }).min(1),
  version: z.string({ error: 'required: the version to run on both sides' }).min(1),
  runs: z
    .string({ error: 'required: the number of pairs, e.g. --runs 4' })
    .regex(/^\d+$/, 'expected a whole number')
    .transform(Number)
    .refine((n) => n >= 2 && n <= 20, 'expected 2 to 20 pairs (one pair measures no spread)'),
  out: z.string({ error: 'required: the report directory' }).min(1),
  write: z.boolean().default(false),
  tests: z.string().optional(),
  'bench-file': z.string().min(1).optional(),
  'users-file': z.string().min(1).optional(),
  'cache-dir': z.string().min(1).optional(),
  history: z.string().min(1).optional(),
  keep: z.boolean().default(false),
  resume: z.boolean().default(false),
  positionals: z.array(z.string()).max(0, 'unexpected argument; every option needs its --name'),
});

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = parseFlags(
    argv,
    {
      config: { type: 'string' },
      version: { type: 'string' },
      runs: { type: 'string' },
      out: { type: 'string' },
      write: { type: 'boolean' },
      tests: { type: 'string' },
      'bench-file': { type: 'string' },
      'users-file': { type: 'string' },
      'cache-dir': { type: 'string' },
      history: { type: 'string' },
      keep: { type: 'boolean' },
      resume: { type: 'boolean' },
    },
    flagsSchema,
    usage,
  );
  const pass = (name: string, value: string | undefined) => (value === undefined ? [] : [`--${name}`, value]);
  const runArgs = [
    ...['--config', flags.config, '--baseline', flags.version, '--candidate', flags.version, '--out', flags.out],
    ...['--repeats', String(flags.runs), '--max-repeats', String(flags.runs)],
    ...pass('tests', flags.tests),
    ...pass('bench-file', flags['bench-file']),
    ...pass('users-file', flags['users-file']),
    ...pass('cache-dir', flags['cache-dir']),
    ...pass('history', flags.history),
    ...(flags.keep ? ['--keep'] : []),
    ...(flags.resume ? ['--resume'] : []),
    ...(flags.write ? ['--update-noise-model'] : []),
  ];
  const options = { ...(await parseRunOptions(runArgs)), calibrate: true };
  await runGate(options, io);
  const file = join(options.outDir, 'noise-model.json');
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) {
    io.out(`calibrate: fewer than two completed runs per side for any gating metric, so no noise was measured; see ${join(options.outDir, 'README.md')}`);
    return 2;
  }
  const model = noiseModelFileSchema.parse(JSON.parse(text));
  io.out(`noise model: ${file}${flags.write ? ` (also written over the config's noiseModel)` : ''}`);
  for (const e of model.entries) {
    io.out(`  ${`${e.test}.${e.metric}`.padEnd(28)} ${e.kind === 'measured' ? `${(e.sdLog * 100).toFixed(2)}% per run (${e.runs} runs, ${e.df} df)` : `assumed ${(e.sdLog * 100).toFixed(2)}%`}`);
    if (e.speed) {
      io.out(`  ${''.padEnd(28)} at one machine speed: ${(e.speed.sdLog * 100).toFixed(2)}% per run (${e.speed.df} df), moving ${e.speed.slope.toFixed(2)}% per 1% of the speed probe's time`);
    }
  }
  return 0;
}
