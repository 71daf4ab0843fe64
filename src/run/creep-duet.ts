import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Progress } from '../bench/progress.ts';
import { CapacityHints } from '../bench/capacity-hints.ts';
import type { GateBench } from '../bench/gate-bench.ts';
import type { RunOptions, Side } from '../bench/gate-plan.ts';
import { chatServerOf } from '../chat-servers/registry.ts';
import { compareRuns, type CompareSetup } from '../compare/compare-runs.ts';
import { judgeCreep, needsDirect } from '../compare/creep.ts';
import type { GateHistory } from '../compare/history.ts';
import { otavaPython } from '../history/otava.ts';
import { historyRecordSchema, type HistoryRecord } from '../history/record.ts';
import { appendRecord, HISTORY_FOLDER, readHistory } from '../history/store.ts';
import type { RunResult } from '../results/schema.ts';
import { verdictFileSchema, type VerdictFile } from '../results/verdict-schema.ts';
import type { CliIO } from '../util/io.ts';
import type { OutDir } from '../util/out-dir.ts';
import { InputError } from '../util/errors.ts';
import { isAnchorPattern } from '../history/chain.ts';

/**
 * The gate's side of the history and the creep check: the history read before any run
 * (a damaged one is bad input, exit 3, before the bench is touched), the anchor-against-
 * candidate duet when the recorded chain cannot decide, and the gate's record appended
 * at the end. The duet is a gate of its own in <out>/creep-anchor/, run by the
 * same loop on a bench of its own (the anchor needs its own install and a dataset built
 * with the older version), so the run sequence and the benches are untouched.
 */

/** The folder under the gate's report where the direct creep measurement goes. */
const CREEP_DIR = 'creep-anchor';

/**
 * The gate's history folder: `--history <dir>`/history, or `<dir>`/history/<profile> where
 * that exists (a reports repository checked out, where publish keeps each profile's apart).
 */
function historyFolder(o: Pick<RunOptions, 'historyDir' | 'config'>): string | undefined {
  if (!o.historyDir) return undefined;
  const own = join(o.historyDir, HISTORY_FOLDER, o.config.name);
  return existsSync(own) ? own : join(o.historyDir, HISTORY_FOLDER);
}

/**
 * The records before this gate; none without --history. A record of another profile, or a
 * damaged one, is refused; so is an anchor release the target cannot install. Both before
 * any run.
 */
export async function readGateHistory(o: RunOptions): Promise<HistoryRecord[]> {
  if (o.calibrate) return [];
  if (o.config.creep && !isAnchorPattern(o.config.creep.anchor)) anchorSide(o, o.config.creep.anchor);
  const dir = historyFolder(o);
  if (!dir) return [];
  return readHistory(dir, { product: o.config.target.system, profile: o.config.name });
}

/** The anchor as the baseline side of its own gate. */
function anchorSide(o: RunOptions, anchor: string): Side {
  const server = chatServerOf(o.config.target.system);
  try {
    return { role: 'baseline', label: anchor, ...server.side('baseline', anchor, [], o.config.target, server.baseOverrides(o.config.target)) };
  } catch (error) {
    throw new InputError(
      `creep.anchor: ${anchor} cannot be run as a release of ${o.config.target.system}: ${(error as Error).message.replace(/^--baseline:\s*/, '')}`,
    );
  }
}

/** Runs one gate (runGateOn), for the anchor duet. */
export type RunGate = (bench: GateBench, o: RunOptions, io: CliIO, progress: Progress, now: () => number) => Promise<number>;

export interface HistoryContext {
  o: RunOptions;
  records: HistoryRecord[];
  setup: CompareSetup;
  out: OutDir;
  progress: Progress;
  now: () => number;
  io: CliIO;
  /** A bench for the anchor duet; none: the direct measurement cannot run here. */
  benchFor?: (o: RunOptions) => Promise<GateBench>;
  runGate: RunGate;
}

/**
 * What compareAndReport judges the gate's history with: the records, Otava's interpreter,
 * and, when the config names a creep anchor, the step passed and the chain cannot decide,
 * the direct anchor-against-candidate gate.
 */
export async function gateHistory(ctx: HistoryContext, runs: { baseline: RunResult[]; candidate: RunResult[] }): Promise<GateHistory | undefined> {
  const { o } = ctx;
  if (o.calibrate || (!o.historyDir && !o.config.creep)) return undefined;
  // Named relative to the report, which is published: a local path says nothing elsewhere.
  const folder = historyFolder(o);
  const history: GateHistory = {
    source: folder ? relative(o.outDir, folder) : '(none: run --history <dir> keeps one)',
    records: ctx.records,
    python: otavaPython(o.cacheDir),
  };
  if (!o.config.creep || !ctx.benchFor || !runs.baseline.length || !runs.candidate.length) return history;
  const step = compareRuns(runs.baseline, runs.candidate, o.config.tolerances, ctx.setup).verdict;
  if (step.verdict !== 'pass') return history;
  const creep = judgeCreep(step, { setting: o.config.creep.anchor, history: ctx.records }, o.config.tolerances.confidence);
  if (!needsDirect(creep) || !creep.anchor) return history;
  ctx.progress.info(`creep: the chain since ${creep.anchor} cannot decide (${creep.line}); measuring ${creep.anchor} against ${o.candidate.label} directly`);
  try {
    return { ...history, direct: await anchorGate(ctx, creep.anchor) };
  } catch (error) {
    // The step's verdict stands; the creep check, unmeasured, stays inconclusive and says so.
    ctx.progress.problem(`creep: ${creep.anchor} could not be measured against ${o.candidate.label}: ${(error as Error).message}`);
    return history;
  }
}

/**
 * The anchor-against-candidate gate, at half of each error rate, its report in
 * <out>/creep-anchor/: sequential like any gate, so usually one duet, and more (up to
 * maxRepeats) while undecided; a single duet at half the rates would leave a third of
 * unchanged releases undecided.
 */
async function anchorGate(ctx: HistoryContext, anchor: string): Promise<{ verdict: VerdictFile; report: string }> {
  const { o } = ctx;
  const server = chatServerOf(o.config.target.system);
  const baseline = anchorSide(o, anchor);
  const { creep: _creep, ...config } = o.config;
  const { historyDir: _history, ...rest } = o;
  const outDir = await ctx.out.mkdir(CREEP_DIR);
  const anchorOptions: RunOptions = {
    ...rest,
    config: { ...config, errorRates: { falseFailPct: o.config.errorRates.falseFailPct / 2, falsePassPct: o.config.errorRates.falsePassPct / 2 } },
    outDir,
    updateNoiseModel: false,
    baseline,
    datasetVersion: server.datasetVersion(baseline.version, o.candidate.version),
    hints: new CapacityHints({ ...(o.historyDir ? { historyDir: o.historyDir } : {}), benchKind: o.config.bench.kind }),
  };
  const io: CliIO = { out: (line) => ctx.io.out(`creep, ${anchor} against ${o.candidate.label}: ${line}`), err: ctx.io.err };
  await ctx.runGate(await ctx.benchFor!(anchorOptions), anchorOptions, io, ctx.progress, ctx.now);
  const verdict = verdictFileSchema.parse(JSON.parse(await readFile(join(outDir, 'verdict.json'), 'utf8')));
  return { verdict, report: CREEP_DIR };
}

/** Appends the record compareAndReport wrote (<out>/history-record.json) to the history, its report linked from there. */
export async function appendGateRecord(o: RunOptions): Promise<string | undefined> {
  const dir = historyFolder(o);
  if (!dir || o.calibrate) return undefined;
  const text = await readFile(join(o.outDir, 'history-record.json'), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const record = historyRecordSchema.parse(JSON.parse(text));
  return appendRecord(dir, { ...record, report: relative(dir, join(o.outDir, 'README.md')) });
}
