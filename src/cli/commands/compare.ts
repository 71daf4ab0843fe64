import { z } from 'zod';
import { compareAndReport, compareVerdict } from '../../compare/compare-and-report.ts';
import { plainMarkdown } from '../../report/format.ts';
import { EXIT_CODES } from '../../results/verdict-schema.ts';
import { loadGateConfig } from '../../config/load.ts';
import { loadRunResult } from '../../results/load.ts';
import { defineCommand, flag } from '../../util/flags.ts';
import type { CliIO } from '../../util/io.ts';

const compareCommand = defineCommand({
  command: 'compare',
  about: `Compares run results of a baseline and a candidate version and writes <dir>/verdict.json,
<dir>/README.md (the report), <dir>/graphs/*.png and copies of the inputs in <dir>/results/.
Tolerances, the noise model, repeats and maxRepeats come from --config (default: the seed
reports' tolerances with noise assumed from them); every run must be of one of its tests,
by name, or the config is refused. The pairs are replayed in repeat order
through the same sequential decision \`loadgate run\` uses, so the verdict is the one the run
stopped with.`,
  flags: {
    baseline: flag.list(
      '<run.json>',
      z.array(z.string().min(1)).min(1, 'give at least one baseline run result'),
      'Run results of the baseline (--baseline a.json b.json, or the flag once per file)',
      true,
    ),
    candidate: flag.list(
      '<run.json>',
      z.array(z.string().min(1)).min(1, 'give at least one candidate run result'),
      'Run results of the candidate, as for --baseline',
      true,
    ),
    out: flag.required(
      '<dir>',
      z.string().min(1, 'name the output directory'),
      'Report directory: new, empty or written by loadgate before (it holds .loadgate-output.json)',
    ),
    config: flag.optional('<gate.yml>', z.string(), 'Gate config: tolerances, noise model, repeats and maxRepeats'),
    note: flag.list('<text>', z.array(z.string()), 'A note for the report (plain text, one line: line breaks become spaces, Markdown shows as typed)'),
    'verdict-only': flag.toggle(
      'Write <dir>/verdict.json alone (the same file, with the decision and next), in a fraction of the time, and remove a README.md and graphs/ left there by an earlier compare; the exit code is the same. For a caller that decides between pairs and renders once',
    ),
  },
  positionals: z.array(z.string()).max(0, 'files belong after --baseline or --candidate (--baseline a.json b.json), and every other flag takes one value'),
  notes: 'Exit codes: 0 pass, 1 fail, 2 inconclusive, 3 bad input.',
});

export const usage = compareCommand.usage;

/**
 * `--baseline a.json b.json` (the usage line's form) is accepted too: trailing positionals
 * join the list flag before them, also after `--baseline=a.json`.
 */
function expandLists(argv: string[]): string[] {
  const out: string[] = [];
  let current: string | undefined;
  for (const arg of argv) {
    if (arg.startsWith('--')) {
      const flag = arg.split('=', 1)[0];
      current = flag === '--baseline' || flag === '--candidate' ? flag : undefined;
      out.push(arg);
    } else if (current && out[out.length - 1] !== current) {
      out.push(current, arg);
    } else {
      out.push(arg);
    }
  }
  return out;
}

export async function run(argv: string[], io: CliIO): Promise<number> {
  const flags = compareCommand.parse(expandLists(argv));
  const config = flags.config ? await loadGateConfig(flags.config) : undefined;
  const baseline = await Promise.all(flags.baseline.map(loadRunResult));
  const candidate = await Promise.all(flags.candidate.map(loadRunResult));
  const verdict = flags['verdict-only']
    ? await compareVerdict({ baseline, candidate, config, configFile: flags.config, outDir: flags.out })
    : await compareAndReport({ baseline, candidate, config, configFile: flags.config, outDir: flags.out, notes: flags.note.map(plainMarkdown) });
  io.out(`${verdict.verdict.toUpperCase()}: ${verdict.summary}`);
  for (const check of verdict.checks.filter((c) => c.verdict !== 'pass')) {
    io.out(`  ${check.verdict.padEnd(12)} ${check.test}: ${check.metric}: ${check.reason}`);
  }
  io.out(`decision: ${verdict.decision.pairs} pair(s); ${verdict.decision.stopReason}${verdict.next === 'repeat' ? ' (next: repeat)' : ''}`);
  io.out(flags['verdict-only'] ? `verdict: ${flags.out}/verdict.json (no report: --verdict-only)` : `report: ${flags.out}/README.md`);
  return EXIT_CODES[verdict.verdict];
}
