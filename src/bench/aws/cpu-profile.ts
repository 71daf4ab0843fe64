import { readMattermostCpuProfile, type ProfileWindow } from '../../chat-servers/mattermost/cpu-profile.ts';
import { PyroscopeClient } from '../../metrics/pyroscope.ts';
import type { StoredProfile } from '../../results/profile.ts';

/**
 * One slot's CPU profile source on the AWS bench: window in (seconds since the epoch),
 * the slot's merged CPU profile over it out, read from the metrics node's Pyroscope
 * (pyroscope_url in bench.json; the controller is admitted to its port as to Prometheus').
 * A bounded and an unbounded test alike: Pyroscope holds the whole run, so the window can
 * be the one the run found afterwards.
 */
export type SlotProfileSource = (window: ProfileWindow) => Promise<StoredProfile>;

export interface SlotProfileOptions {
  pyroscopeUrl: string;
  slot: 'a' | 'b';
  /** The bench's Alloy scrape_interval (metrics.sh.tftpl). */
  scrapeIntervalSec: number;
  signal?: () => AbortSignal;
}

export function pyroscopeSlotProfile(o: SlotProfileOptions): SlotProfileSource {
  const pyroscope = new PyroscopeClient(o.pyroscopeUrl);
  return (window) => readMattermostCpuProfile({ pyroscope, slot: o.slot, scrapeIntervalSec: o.scrapeIntervalSec, ...(o.signal ? { signal: o.signal() } : {}) }, window);
}
