import type { PrometheusClient } from '../../metrics/prometheus.ts';
import { cpuCount, cpuListRegex } from '../../metrics/target-cpus.ts';
import type { RunResult } from '../../results/schema.ts';

/**
 * The CPU other work took from the bench during a run's measured window: node_exporter's
 * busy time on the bench's cores (target and engine cores) less the CPU of the bench's own
 * processes (loadgate and everything it started, process exporter's
 * loadgate_bench_cpu_seconds_total), as a share of those cores. A duet cancels what slows
 * both sides alike, not contention that lands on one side's processes more than the
 * other's; this says when there was enough of it to doubt the duet.
 *
 * Busy is every mode but idle and iowait (node_exporter's cpu collector exports the
 * kernel's /proc/stat modes): steal counts, since a hypervisor's other guests take CPU
 * from the bench as another process would. loadgate's own process is not pinned, so on a
 * machine with cores beyond the bench's a little of its CPU may run elsewhere and the
 * share reads that much low.
 */
export type OutsideCpu = NonNullable<RunResult['outsideCpu']>;

export interface OutsideCpuInputs {
  /** CPU seconds the bench's cores were busy over the window; null when not measured. */
  hostBusySec: number | null;
  /** CPU seconds of the bench's own processes over the window; null when not measured. */
  benchSec: number | null;
  cores: number;
  windowSec: number;
  limitPercent: number;
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/**
 * The shares as a run result records them. A series that Prometheus has no samples of in
 * the window (node_exporter down, the exporter not yet scraped) is unknown, not zero: the
 * share is then not measured, and says why.
 */
export function outsideCpuShare(i: OutsideCpuInputs): OutsideCpu {
  const capacity = i.cores * i.windowSec;
  const missing = [
    i.hostBusySec === null ? "node_exporter's busy CPU" : '',
    i.benchSec === null ? "the bench's own CPU (loadgate_bench_cpu_seconds_total)" : '',
  ].filter(Boolean);
  if (!(capacity > 0)) return { limitPercent: i.limitPercent, unmeasured: 'the measured window is empty' };
  if (missing.length) return { limitPercent: i.limitPercent, unmeasured: `no samples of ${missing.join(' or ')} in the measured window` };
  const host = (100 * (i.hostBusySec as number)) / capacity;
  const bench = (100 * (i.benchSec as number)) / capacity;
  // The two counters are scraped at different instants: a small negative difference is that, not negative load.
  return { percent: round1(Math.max(0, host - bench)), hostPercent: round1(host), benchPercent: round1(bench), limitPercent: i.limitPercent };
}

/** The two PromQL queries over a window of `windowSec` seconds ending at the evaluation time. */
export function outsideCpuQueries(benchCpus: string, windowSec: number): { hostBusy: string; bench: string } {
  const range = `${Math.max(1, Math.round(windowSec))}s`;
  return {
    hostBusy: `sum(increase(node_cpu_seconds_total{job="node",mode!~"idle|iowait",cpu=~"${cpuListRegex(benchCpus)}"}[${range}]))`,
    bench: `sum(increase(loadgate_bench_cpu_seconds_total{job="process"}[${range}]))`,
  };
}

/** The bench's cores, target and engine, as one CPU list ("0,1"). */
export function benchCpuList(targetCpus: string, engineCpus: string): string {
  const cores = new Set([...cpuListRegex(targetCpus).split('|'), ...cpuListRegex(engineCpus).split('|')].map(Number));
  return [...cores].sort((a, b) => a - b).join(',');
}

/** Measures the share over [stableStart, stableEnd] (unix seconds) from one slot's Prometheus. */
export async function measureOutsideCpu(
  prometheus: Pick<PrometheusClient, 'query'>,
  window: { stableStart: number; stableEnd: number },
  cpus: { target: string; engine: string },
  limitPercent: number,
): Promise<OutsideCpu> {
  const benchCpus = benchCpuList(cpus.target, cpus.engine);
  const windowSec = window.stableEnd - window.stableStart;
  if (!(windowSec > 0)) return { limitPercent, unmeasured: 'the measured window is empty' };
  const q = outsideCpuQueries(benchCpus, windowSec);
  // An empty vector (no series, or fewer than two samples in the range) is unknown.
  const one = async (promql: string): Promise<number | null> => {
    const samples = await prometheus.query(promql, window.stableEnd);
    const value = samples[0]?.value;
    return value !== undefined && Number.isFinite(value) ? value : null;
  };
  try {
    const [hostBusySec, benchSec] = await Promise.all([one(q.hostBusy), one(q.bench)]);
    return outsideCpuShare({ hostBusySec, benchSec, cores: cpuCount(benchCpus), windowSec, limitPercent });
  } catch (error) {
    return { limitPercent, unmeasured: `Prometheus did not answer: ${(error as Error).message}` };
  }
}
