import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { ProfileBuilder, type ProfileFrame } from '../../results/profile.ts';

/**
 * A Go CPU profile (pprof's profile.proto, gzipped or not) as the run result's frames and
 * stacks (results/profile.ts), so the profile diff judges it as it does py-spy's: each
 * sample's stack root first, inlined calls expanded, its CPU time counted in samples of
 * `sampleSec`. The count comes from the cpu/nanoseconds values, not the recorded period,
 * which a merged profile may rewrite (Pyroscope writes 1 s).
 */
export function goCpuStacks(bytes: Uint8Array, sampleSec: number): { frames: ProfileFrame[]; stacks: { frames: number[]; samples: number }[] } {
  const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
  const profile = Profile.decode(raw);
  const str = (i: number | bigint): string => profile.stringTable.strings[Number(i)] ?? '';
  const cpuIndex = profile.sampleType.findIndex((t) => str(t.type) === 'cpu' && str(t.unit) === 'nanoseconds');
  if (cpuIndex < 0) throw new Error('not a CPU profile: no cpu/nanoseconds sample type');
  const built = new ProfileBuilder();
  const fnIndex = new Map<string, number>();
  for (const f of profile.function) {
    fnIndex.set(String(f.id), built.frame({ name: str(f.name), file: str(f.filename), ...(Number(f.startLine) > 0 ? { line: Number(f.startLine) } : {}) }));
  }
  const locations = new Map<string, number[]>();
  for (const loc of profile.location)
    locations.set(
      String(loc.id),
      loc.line.flatMap((l) => fnIndex.get(String(l.functionId)) ?? []),
    );
  for (const sample of profile.sample) {
    const nanos = Number(sample.value[cpuIndex] ?? 0);
    // Leaf first, innermost inlined call first: reversed, root first.
    const stack = sample.locationId.flatMap((id) => locations.get(String(id)) ?? []).reverse();
    built.add(stack, nanos / 1e9 / sampleSec);
  }
  return { frames: built.frames, stacks: built.stacks };
}
