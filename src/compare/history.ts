import type { GateConfig } from '../config/schema.ts';
import { recordOf, type HistoryRecord } from '../history/record.ts';
import { historyView } from '../history/series.ts';
import type { RunResult } from '../results/schema.ts';
import type { VerdictFile } from '../results/verdict-schema.ts';
import { judgeCreep, withCreep } from './creep.ts';

/**
 * The gate against the releases before it: its creep check (the config's creep.anchor)
 * and its series with Otava's change points, from the history `run --history` read; and
 * its own record, which the gate appends to that history (and publish to the reports
 * repository's).
 */

export interface GateHistory {
  /** The history folder, as the report names it. */
  source: string;
  /** Its records before this gate, read and checked (store.ts readHistory). */
  records: HistoryRecord[];
  /** Otava's interpreter (history/otava.ts otavaPython). */
  python: string;
  /** The anchor-against-candidate gate, when the chain could not decide (src/run/creep-duet.ts). */
  direct?: { verdict: VerdictFile; report: string };
}

/** A gate's record, before the gate appends it: its report is README.md beside it. */
function gateRecord(verdict: VerdictFile, runs: readonly RunResult[], config: GateConfig | undefined): HistoryRecord {
  const first = runs.find((r) => r.status === 'completed') ?? runs[0];
  if (!first) throw new Error("a gate record needs the gate's runs");
  // The last run's end, not the clock: the same runs give the same record.
  const date = runs.reduce((d, r) => (Date.parse(r.finishedAt) > Date.parse(d) ? r.finishedAt : d), first.finishedAt);
  return recordOf(verdict, { product: first.target.system, profile: config?.name ?? 'default', bench: first.bench, date, report: 'README.md' });
}

/** The verdict with its creep check and history view, and the gate's record (none when its runs give none). */
export async function judgeWithHistory(
  verdict: VerdictFile,
  runs: readonly RunResult[],
  config: GateConfig | undefined,
  history: GateHistory | undefined,
): Promise<{ verdict: VerdictFile; record: HistoryRecord | undefined }> {
  let judged = verdict;
  const confidence = config?.tolerances.confidence ?? 0.95;
  if (config?.creep && history) {
    judged = withCreep(
      verdict,
      judgeCreep(verdict, { setting: config.creep.anchor, history: history.records, ...(history.direct ? { direct: history.direct } : {}) }, confidence),
    );
  }
  let record: HistoryRecord | undefined;
  try {
    record = gateRecord(judged, runs, config);
  } catch {
    // A record is what the next gates chain: one that cannot be formed (no run finished) is not kept, and the verdict stands.
    record = undefined;
  }
  if (!history) return { verdict: judged, record };
  const view = await historyView(record ? [...history.records, record] : history.records, verdict.candidate.version, {
    source: history.source,
    confidence,
    python: history.python,
  });
  return { verdict: { ...judged, history: view }, record };
}
