import { setTimeout as sleep } from 'node:timers/promises';
import { labelSelector, type PyroscopeClient } from '../../metrics/pyroscope.ts';
import { storedProfileSchema, type StoredProfile } from '../../results/profile.ts';
import { goStoredProfile } from './pprof.ts';

/**
 * A Mattermost slot's CPU profile over a run's measured window, read from the bench's own
 * Pyroscope: no profiler of the gate's own on the process, which has one CPU profiler
 * (runtime/pprof.StartCPUProfile refuses a second: "cpu profiling already in use"), and
 * nothing bounded by the metrics listener's WriteTimeout.
 *
 * The bench's Alloy (infra/aws/modules/bench/templates/metrics.sh.tftpl) scrapes every app
 * node's Mattermost metrics listener with pyroscope.scrape, the way load-test-ng's
 * deployment does (deployment/terraform/pyroscope.go NewAlloyConfig): the process_cpu
 * profile type at /debug/pprof/profile, asked for scrape_interval - 1 s each
 * scrape_interval (grafana/alloy internal/component/pyroscope/scrape/target.go
 * targetsFromGroup), each slot's service under its own service_name and every node under
 * its own instance. Each scrape is a Go CPU profile whose time is when it started
 * (runtime/pprof), which is the time Pyroscope keeps and selects on.
 */

/** The bench's Alloy scrape_interval for the app nodes' profiles (metrics.sh.tftpl alloy_config). */
export const BENCH_PROFILE_SCRAPE_INTERVAL_SEC = 15;

/** Go's CPU profile in Pyroscope: its cpu/nanoseconds sample type (the other is samples/count). */
export const MATTERMOST_CPU_PROFILE_TYPE = 'process_cpu:cpu:nanoseconds:cpu:nanoseconds';

/** The service_name the bench's Alloy gives each slot's Mattermost (slot a is a sequential bench's only one). */
export function mattermostServiceName(slot: 'a' | 'b'): string {
  return slot === 'a' ? 'mattermost' : 'mattermost-b';
}

export function mattermostProfileSelector(slot: 'a' | 'b'): string {
  return labelSelector({ service_name: mattermostServiceName(slot) });
}

/**
 * Go's CPU profiler samples at 100 Hz (runtime/pprof StartCPUProfile; net/http/pprof's
 * Profile uses it). Pyroscope keeps the CPU time and writes a 1 s period into every merged
 * process_cpu profile (pkg/pprof SetProfileMetadata), so the samples are counted again at
 * the rate they were taken: the profile diff treats a count as Poisson.
 */
const GO_CPU_SAMPLE_SEC = 0.01;
/** After the last profile of a window ends, the time Alloy may take to write it. */
const WRITE_GRACE_SEC = 3;

export interface MattermostProfileSource {
  pyroscope: PyroscopeClient;
  slot: 'a' | 'b';
  /** The bench's Alloy scrape_interval: each profile lasts one second less. */
  scrapeIntervalSec: number;
  signal?: AbortSignal;
  /** Seconds since the epoch (tests move it). */
  now?: () => number;
}

/** A window in seconds since the epoch. */
export interface ProfileWindow {
  startSec: number;
  endSec: number;
}

/**
 * The slot's CPU profile over `window`, every app node's merged, as the run result stores
 * it. The profiles taken are those whose middle falls inside the window (each lasts
 * scrape_interval - 1 s, so a window's edges cut at most half of one); what they cover is
 * counted from Pyroscope itself, profile by profile and node by node, so a scrape that
 * failed (a listener down, its profiler taken) lowers the coverage instead of the CPU per
 * request. Throws naming what is missing when Pyroscope holds no profile of the window.
 */
export async function readMattermostCpuProfile(src: MattermostProfileSource, window: ProfileWindow): Promise<StoredProfile> {
  const windowSec = window.endSec - window.startSec;
  if (!(windowSec > 0)) throw new Error(`an empty window (${window.startSec} to ${window.endSec})`);
  const profileSec = src.scrapeIntervalSec - 1;
  if (!(profileSec >= 1)) throw new Error(`the profiles' scrape interval must be 2 s or more, not ${src.scrapeIntervalSec}`);
  // The last profile starts at most half a profile before the window's end; wait until Alloy has written it.
  const readyAt = window.endSec + profileSec / 2 + WRITE_GRACE_SEC;
  const now = (src.now ?? (() => Date.now() / 1000))();
  if (readyAt > now) await sleep((readyAt - now) * 1000, undefined, src.signal ? { signal: src.signal } : {});

  const selector = mattermostProfileSelector(src.slot);
  const query = { profileTypeId: MATTERMOST_CPU_PROFILE_TYPE, labelSelector: selector, startMs: Math.round((window.startSec - profileSec / 2) * 1000), endMs: Math.round((window.endSec - profileSec / 2) * 1000) };
  // SelectSeries reads from start - step (pkg/querier SelectSeries): one step later reads the same profiles.
  const series = await src.pyroscope.selectSeries({ ...query, startMs: query.startMs + 1000, stepSec: 1, groupBy: ['instance'] });
  const perNode = series.map((s) => s.points.length).filter((n) => n > 0);
  if (!perNode.length) {
    throw new Error(`Pyroscope (${src.pyroscope.baseUrl}) holds no ${MATTERMOST_CPU_PROFILE_TYPE} profile of ${selector} from ${new Date(query.startMs).toISOString()} to ${new Date(query.endMs).toISOString()}: the bench's Alloy wrote none (is the slot's metrics listener up, and its CPU profiler free?)`);
  }
  const coveredSec = Math.min(windowSec, (perNode.reduce((a, b) => a + b, 0) / perNode.length) * profileSec);
  const merged = goStoredProfile([await src.pyroscope.selectMergeProfile(query)], { windowSec });
  const scale = merged.sampleSec / GO_CPU_SAMPLE_SEC;
  return storedProfileSchema.parse({
    ...merged,
    tool: `Go pprof via Pyroscope (${perNode.reduce((a, b) => a + b, 0)} profiles of ${profileSec} s, ${perNode.length} node(s))`,
    sampleSec: GO_CPU_SAMPLE_SEC,
    coveredSec,
    stacks: merged.stacks.map((s) => ({ frames: s.frames, samples: s.samples * scale })),
  });
}
