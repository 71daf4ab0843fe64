import { median } from '../../compare/stats.ts';
import { runTool } from './exec.ts';

/**
 * A CPU speed probe on the target's cores: a fixed Python workload (JSON and dicts, the
 * kind of work Synapse does), timed in CPU milliseconds every `intervalSec` while a run
 * goes. The local bench is a shared VM whose speed moves by up to a fifth between runs
 * minutes apart; the run's own metrics cannot show it, because a slower machine and a
 * costlier release look the same from inside. The probe's cost does not depend on the
 * release, so it can. On this bench, beside ten unbounded runs, the median probe time
 * during a run explained supported users with r = −0.84 (log-log; 8.2 % per run, 4.7 %
 * once regressed on the probe; README, "What the pair differences changed").
 *
 * CPU time, not wall time: the probe shares the cores with the loaded target, and CPU
 * time measures how fast the core runs (frequency, cache and memory contention, steal)
 * rather than how long the scheduler kept the probe waiting. Each probe costs about
 * 60 ms of CPU, 0.4 % of one core at the default interval.
 */

/**
 * Bumped when the workload changes: probe times of different workloads do not compare.
 * The summary's `workload` adds the interpreter that ran it ("python-json-v1 CPython
 * 3.11.2"), so two sides whose venvs were built on different Pythons are not compared
 * as two machine speeds.
 */
export const SPEED_PROBE_WORKLOAD = 'python-json-v1';

const WORKLOAD = `
import json, platform, time
doc = {"events": [{"type": "m.room.message", "sender": "@u%d:localhost" % i, "content": {"body": "hello " * 8, "msgtype": "m.text"}, "origin_server_ts": i} for i in range(200)]}
t0 = time.process_time()
s = 0
for _ in range(110):
    d = json.loads(json.dumps(doc))
    s += sum(len(e["sender"]) for e in d["events"])
    s += len({e["sender"]: e for e in d["events"]})
print("%.3f %s %s" % ((time.process_time() - t0) * 1000, platform.python_implementation(), platform.python_version()))
`;

export interface SpeedProbeSummary {
  workload: string;
  samples: number;
  cpuMsMedian: number;
  cpuMsMin: number;
  cpuMsMax: number;
}

export interface SpeedProbeOptions {
  /** The Python that runs the workload (the target's own interpreter). */
  python: string;
  /** CPU list for `taskset -c`: the target's cores. */
  cpus: string;
  intervalSec?: number;
}

export interface ProbeSample {
  cpuMs: number;
  /** "CPython 3.11.2" */
  interpreter: string;
}

/** One probe: the workload's CPU time in ms and the interpreter that ran it. */
export async function probeOnce(options: SpeedProbeOptions): Promise<ProbeSample> {
  const { stdout } = await runTool('taskset', ['-c', options.cpus, options.python, '-c', WORKLOAD], { timeoutMs: 10_000 });
  return parseProbeOutput(stdout);
}

export function parseProbeOutput(stdout: string): ProbeSample {
  const [ms, ...interpreter] = stdout.trim().split(/\s+/);
  const cpuMs = Number(ms);
  if (!Number.isFinite(cpuMs) || cpuMs <= 0 || !interpreter.length) throw new Error(`the speed probe printed ${JSON.stringify(stdout.trim().slice(0, 80))}, not a CPU time in ms and the interpreter`);
  return { cpuMs, interpreter: interpreter.join(' ') };
}

export function summarizeProbes(samples: readonly ProbeSample[]): SpeedProbeSummary | undefined {
  if (!samples.length) return undefined;
  const ms = samples.map((s) => s.cpuMs);
  const interpreters = [...new Set(samples.map((s) => s.interpreter))].sort().join(', ');
  const round = (x: number) => Math.round(x * 100) / 100;
  return { workload: `${SPEED_PROBE_WORKLOAD} ${interpreters}`, samples: ms.length, cpuMsMedian: round(median(ms)), cpuMsMin: round(Math.min(...ms)), cpuMsMax: round(Math.max(...ms)) };
}

/**
 * Probes every `intervalSec` until `stop()`, which waits for a probe in flight (at most
 * its 10 s time-out) and returns the summary. A failed probe is counted, not fatal: the
 * probe describes the bench, it does not judge the release.
 */
export function startSpeedProbe(options: SpeedProbeOptions): { stop: () => Promise<{ summary: SpeedProbeSummary | undefined; failures: string[] }> } {
  const samples: ProbeSample[] = [];
  const failures: string[] = [];
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        samples.push(await probeOnce(options));
      } catch (error) {
        failures.push((error as Error).message);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, (options.intervalSec ?? 15) * 1000);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      wake?.();
      await loop;
      return { summary: summarizeProbes(samples), failures: [...new Set(failures)] };
    },
  };
}
