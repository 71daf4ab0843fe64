import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { ProfileBuilder, storedProfileSchema, type StoredProfile } from '../../results/profile.ts';

/**
 * Go CPU profiles (one per app node, of the same window) in the run result's stored form
 * (results/profile.ts), so the profile diff judges them as it does py-spy's: each
 * sample's stack root first, inlined calls expanded, its CPU time counted in sampling
 * periods. The nodes' profiles are pooled: the run's requests are the whole cluster's.
 */
export function goStoredProfile(profiles: readonly Uint8Array[], window: { windowSec: number }): StoredProfile {
  const built = new ProfileBuilder();
  let sampleSec: number | undefined;
  let coveredSec = 0;
  for (const bytes of profiles) {
    const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
    const profile = Profile.decode(raw);
    const str = (i: number | bigint): string => profile.stringTable.strings[Number(i)] ?? '';
    const cpuIndex = profile.sampleType.findIndex((t) => str(t.type) === 'cpu' && str(t.unit) === 'nanoseconds');
    if (cpuIndex < 0) throw new Error('not a CPU profile: no cpu/nanoseconds sample type');
    // runtime/pprof records its sampling period (10 ms at the default 100 Hz) in nanoseconds.
    const periodNanos = Number(profile.period);
    if (!(periodNanos > 0)) throw new Error('the CPU profile records no sampling period');
    if (sampleSec !== undefined && Math.abs(sampleSec - periodNanos / 1e9) > 1e-12) throw new Error('the app nodes sampled at different rates');
    sampleSec = periodNanos / 1e9;
    coveredSec = Math.max(coveredSec, Number(profile.durationNanos) / 1e9);
    const fnIndex = new Map<string, number>();
    for (const f of profile.function) {
      fnIndex.set(String(f.id), built.frame({ name: str(f.name), file: str(f.filename), ...(Number(f.startLine) > 0 ? { line: Number(f.startLine) } : {}) }));
    }
    const locations = new Map<string, number[]>();
    for (const loc of profile.location) locations.set(String(loc.id), loc.line.flatMap((l) => fnIndex.get(String(l.functionId)) ?? []));
    for (const sample of profile.sample) {
      const nanos = Number(sample.value[cpuIndex] ?? 0);
      // Leaf first, innermost inlined call first: reversed, root first.
      const stack = sample.locationId.flatMap((id) => locations.get(String(id)) ?? []).reverse();
      built.add(stack, nanos / periodNanos);
    }
  }
  if (sampleSec === undefined || coveredSec <= 0) throw new Error('no CPU profile to store');
  // A profile that ran on past a test that stopped early covers at most the window.
  return storedProfileSchema.parse({ tool: 'Go pprof', sampleSec, windowSec: window.windowSec, coveredSec: Math.min(coveredSec, window.windowSec), frames: built.frames, stacks: built.stacks });
}
