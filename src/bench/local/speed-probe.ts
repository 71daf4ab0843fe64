import { median } from '../../util/stats.ts';
import { runTool } from '../../util/run-tool.ts';

/**
 * A CPU speed probe on the target's cores: a fixed Python workload (JSON and dicts, the
 * kind of work Synapse does), timed in CPU milliseconds every `intervalSec` while a run
 * goes, each time in a fresh process. The local bench is a shared VM whose speed moves by
 * up to a fifth between runs minutes apart; the run's own metrics cannot show it, because
 * a slower machine and a costlier release look the same from inside. The probe's cost does
 * not depend on the release, so it can.
 *
 * CPU time, not wall time: the probe shares the cores with the loaded target, and CPU
 * time measures how fast the core runs (frequency, cache and memory contention, steal)
 * rather than how long the scheduler kept the probe waiting. Each probe costs about
 * 60 ms of CPU with the interpreter's start, 1.2 % of one core at the default interval.
 *
 * The speed moves within a run too, from one minute to the next. So the summary is taken
 * over the run's measured window (the unbounded test's settled hold, the bounded test's
 * stable window) whenever that window holds enough samples: a whole-run median also reads
 * the climb, minutes before the users the estimate averages, and follows supported users
 * less closely (docs/local.md, "The machine's own speed";
 * docs/research/2026-11-25-speed-probe.md).
 */

/**
 * Bumped when the workload changes: probe times of different workloads do not compare.
 * The summary's `workload` adds the interpreter that ran it ("python-json-v1 CPython
 * 3.11.2"), so two sides whose venvs were built on different Pythons are not compared
 * as two machine speeds.
 */
export const SPEED_PROBE_WORKLOAD = 'python-json-v1';

/**
 * Appended to the workload's name when the summary covers only the run's measured window:
 * a window median and a whole-run median of the same workload are different measurements,
 * and every comparison of probe times (the report, the speed fit) keys on the name.
 */
export const WINDOW_SPAN_SUFFIX = '@window';

/** Appended to the workload's name for the probe at set-up, on an idle machine: another measurement again. */
const SETUP_SPAN_SUFFIX = '@setup';

/** Probes at set-up: enough for a median that one slow start of the interpreter does not move. */
const SETUP_SAMPLES = 5;

/** Samples the window needs before its median stands for it; fewer, and the whole run is summarised. */
export const MIN_WINDOW_SAMPLES = 6;

/** Seconds between probes: 36 samples over the local profile's 3-minute hold. */
const DEFAULT_PROBE_INTERVAL_SEC = 5;

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
  /** Seconds from the probe's start (the run's start) to the end of this probe. */
  atSec?: number;
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
  if (!Number.isFinite(cpuMs) || cpuMs <= 0 || !interpreter.length)
    throw new Error(`the speed probe printed ${JSON.stringify(stdout.trim().slice(0, 80))}, not a CPU time in ms and the interpreter`);
  return { cpuMs, interpreter: interpreter.join(' ') };
}

/**
 * The samples' median, min and max. With a `window` (seconds from the run's start), only
 * the samples that ended inside it count, and the workload is named `…@window`; a window
 * with fewer than MIN_WINDOW_SAMPLES falls back to the whole run under the plain name.
 */
export function summarizeProbes(samples: readonly ProbeSample[], window?: { startSec: number; endSec: number }): SpeedProbeSummary | undefined {
  const inWindow = window ? samples.filter((s) => s.atSec !== undefined && s.atSec >= window.startSec && s.atSec <= window.endSec) : [];
  const windowed = inWindow.length >= MIN_WINDOW_SAMPLES;
  const used = windowed ? inWindow : samples;
  if (!used.length) return undefined;
  const ms = used.map((s) => s.cpuMs);
  const interpreters = [...new Set(used.map((s) => s.interpreter))].sort().join(', ');
  const round = (x: number) => Math.round(x * 100) / 100;
  const name = `${SPEED_PROBE_WORKLOAD}${windowed ? WINDOW_SPAN_SUFFIX : ''}`;
  return {
    workload: `${name} ${interpreters}`,
    samples: ms.length,
    cpuMsMedian: round(median(ms)),
    cpuMsMin: round(Math.min(...ms)),
    cpuMsMax: round(Math.max(...ms)),
  };
}

/**
 * The machine's speed before any load: a few probes one after another on the target's
 * cores, summarised as `…@setup`. Undefined when every probe failed: a start hint is an
 * optimisation, and the gate goes on without it.
 */
export async function machineSpeedAtSetup(options: SpeedProbeOptions): Promise<SpeedProbeSummary | undefined> {
  const samples: ProbeSample[] = [];
  for (let i = 0; i < SETUP_SAMPLES; i++) {
    const sample = await probeOnce(options).catch(() => undefined);
    if (sample) samples.push(sample);
  }
  const summary = summarizeProbes(samples);
  return summary && { ...summary, workload: summary.workload.replace(SPEED_PROBE_WORKLOAD, `${SPEED_PROBE_WORKLOAD}${SETUP_SPAN_SUFFIX}`) };
}

/**
 * Probes every `intervalSec` until `stop()`, which waits for a probe in flight (at most
 * its 10 s time-out) and returns the samples, each stamped with its time from the start.
 * A failed probe is counted, not fatal: the probe describes the bench, it does not judge
 * the release.
 */
export function startSpeedProbe(options: SpeedProbeOptions): { stop: () => Promise<{ samples: ProbeSample[]; failures: string[] }> } {
  const samples: ProbeSample[] = [];
  const startMs = Date.now();
  const failures: string[] = [];
  let stopped = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopped) {
      try {
        const sample = await probeOnce(options);
        samples.push({ ...sample, atSec: (Date.now() - startMs) / 1000 });
      } catch (error) {
        failures.push((error as Error).message);
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, (options.intervalSec ?? DEFAULT_PROBE_INTERVAL_SEC) * 1000);
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
      return { samples: [...samples], failures: [...new Set(failures)] };
    },
  };
}
