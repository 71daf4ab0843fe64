import { setTimeout as sleep } from 'node:timers/promises';
import { labelSelector, PyroscopeClient } from '../../metrics/pyroscope.ts';
import { storedProfileSchema, type StoredProfile } from '../../results/profile.ts';
import type { ProfileCapability } from '../chat-server.ts';
import { goCpuStacks } from './pprof.ts';

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

/**
 * Mattermost's profile capability: the bench's Pyroscope (ProfileTarget.continuous, from
 * bench.json, with the bench's Alloy scrape_interval) holds every app node's profiles the
 * whole time, so nothing is installed or attached; a slot's profile is read over its
 * window once the run is over, bounded and unbounded tests alike.
 */
export const pyroscopeProfile: ProfileCapability = {
  prepare: async ({ signal }) => ({
    attach(target) {
      const { continuous } = target;
      if (!continuous) throw new Error("Mattermost's profile is read from the bench's continuous profiler (Pyroscope): the bench gave none");
      const src: MattermostProfileSource = {
        pyroscope: new PyroscopeClient(continuous.url),
        slot: target.slot ?? 'a',
        scrapeIntervalSec: continuous.scrapeIntervalSec,
        ...(signal ? { signal } : {}),
      };
      return {
        // Pyroscope keeps sampling after the run: there is nothing of the gate's to stop.
        stop: async () => {},
        profile: (window) => readMattermostCpuProfile(src, window).catch((error: Error) => error.message),
      };
    },
  }),
};

interface MattermostProfileSource {
  pyroscope: PyroscopeClient;
  /** A sequential bench's only slot is a. */
  slot: 'a' | 'b';
  /** The bench's Alloy scrape_interval: each profile lasts one second less. */
  scrapeIntervalSec: number;
  signal?: AbortSignal;
}

/**
 * The slot's CPU profile over `window`, every app node's merged, as the run result stores
 * it. The profiles taken are those whose middle falls inside the window (each lasts
 * scrape_interval - 1 s, so a window's edges cut at most half of one); what they cover is
 * counted from Pyroscope itself, profile by profile and node by node, so a scrape that
 * failed (a listener down, its profiler taken) lowers the coverage instead of the CPU per
 * request. Throws naming what is missing when Pyroscope holds no profile of the window.
 */
async function readMattermostCpuProfile(src: MattermostProfileSource, window: { startSec: number; endSec: number }): Promise<StoredProfile> {
  const windowSec = window.endSec - window.startSec;
  if (!(windowSec > 0)) throw new Error(`an empty window (${window.startSec} to ${window.endSec})`);
  const profileSec = src.scrapeIntervalSec - 1;
  if (!(profileSec >= 1)) throw new Error(`the profiles' scrape interval must be 2 s or more, not ${src.scrapeIntervalSec}`);
  // The last profile starts at most half a profile before the window's end; wait until Alloy has written it.
  const readyAt = window.endSec + profileSec / 2 + WRITE_GRACE_SEC;
  const now = Date.now() / 1000;
  if (readyAt > now) await sleep((readyAt - now) * 1000, undefined, src.signal ? { signal: src.signal } : {});

  const selector = mattermostProfileSelector(src.slot);
  const query = {
    profileTypeId: MATTERMOST_CPU_PROFILE_TYPE,
    labelSelector: selector,
    startMs: Math.round((window.startSec - profileSec / 2) * 1000),
    endMs: Math.round((window.endSec - profileSec / 2) * 1000),
  };
  // SelectSeries reads from start - step (pkg/querier SelectSeries): one step later reads the same profiles.
  const series = await src.pyroscope.selectSeries({ ...query, startMs: query.startMs + 1000, stepSec: 1, groupBy: ['instance'] });
  const perNode = series.map((s) => s.points.length).filter((n) => n > 0);
  if (!perNode.length) {
    throw new Error(
      `Pyroscope (${src.pyroscope.baseUrl}) holds no ${MATTERMOST_CPU_PROFILE_TYPE} profile of ${selector} from ${new Date(query.startMs).toISOString()} to ${new Date(query.endMs).toISOString()}: the bench's Alloy wrote none (is the slot's metrics listener up, and its CPU profiler free?)`,
    );
  }
  const profiles = perNode.reduce((a, b) => a + b, 0);
  const coveredSec = Math.min(windowSec, (profiles / perNode.length) * profileSec);
  const { frames, stacks } = goCpuStacks(await src.pyroscope.selectMergeProfile(query), GO_CPU_SAMPLE_SEC);
  return storedProfileSchema.parse({
    tool: `Go pprof via Pyroscope (${profiles} profiles of ${profileSec} s, ${perNode.length} node(s))`,
    sampleSec: GO_CPU_SAMPLE_SEC,
    windowSec,
    coveredSec,
    frames,
    stacks,
  });
}
