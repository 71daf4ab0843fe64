import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { storedProfileSchema, type ProfileFrame, type StoredProfile } from '../../results/profile.ts';

/**
 * A Go CPU profile (`/debug/pprof/profile`, Mattermost's metrics listener) as CPU time per
 * function. Go writes the profile gzipped (runtime/pprof's protobuf writer); pprof-format
 * decodes the protobuf (github.com/google/pprof proto/profile.proto). Each sample holds a
 * stack, leaf first; a location holds its inlined calls innermost first, so the leaf's
 * first line is the function that was on the CPU (self time) and every distinct function
 * on the stack counts the sample once in its total time.
 */
export interface GoFunctionCpu {
  name: string;
  file: string;
  /** The function's first line in its file (0 when the binary did not record it). */
  line?: number;
  selfSeconds: number;
  totalSeconds: number;
}

export interface GoCpuProfile {
  /** How long the profile sampled (its duration_nanos). */
  durationSeconds: number;
  /** CPU time over every sample. */
  cpuSeconds: number;
  /** By self time, largest first. */
  functions: GoFunctionCpu[];
}

/** Decodes a CPU profile (gzipped or not); throws naming what is missing when it is not one. */
export function aggregateGoCpuProfile(bytes: Uint8Array): GoCpuProfile {
  const raw = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
  const profile = Profile.decode(raw);
  const strings = profile.stringTable.strings;
  const str = (i: number | bigint): string => strings[Number(i)] ?? '';
  // Go's CPU profile has two sample types: samples/count and cpu/nanoseconds.
  const cpuIndex = profile.sampleType.findIndex((t) => str(t.type) === 'cpu' && str(t.unit) === 'nanoseconds');
  if (cpuIndex < 0) throw new Error(`not a CPU profile: its sample types are ${profile.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`).join(', ') || 'none'}, with no cpu/nanoseconds`);

  const functions = new Map<string, { name: string; file: string; line: number }>();
  for (const f of profile.function) functions.set(String(f.id), { name: str(f.name), file: str(f.filename), line: Number(f.startLine) });
  // A location's frames, innermost first, as function keys.
  const frames = new Map<string, string[]>();
  for (const loc of profile.location) frames.set(String(loc.id), loc.line.map((l) => String(l.functionId)));

  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let cpuNanos = 0;
  for (const sample of profile.sample) {
    const nanos = Number(sample.value[cpuIndex] ?? 0);
    if (nanos <= 0) continue;
    cpuNanos += nanos;
    const stack = sample.locationId.flatMap((id) => frames.get(String(id)) ?? []);
    const leaf = stack[0];
    if (leaf !== undefined) self.set(leaf, (self.get(leaf) ?? 0) + nanos);
    for (const fn of new Set(stack)) total.set(fn, (total.get(fn) ?? 0) + nanos);
  }
  const out: GoFunctionCpu[] = [];
  for (const [id, nanos] of total) {
    const f = functions.get(id);
    if (!f) continue;
    out.push({ name: f.name, file: f.file, ...(f.line > 0 ? { line: f.line } : {}), selfSeconds: (self.get(id) ?? 0) / 1e9, totalSeconds: nanos / 1e9 });
  }
  out.sort((a, b) => b.selfSeconds - a.selfSeconds || b.totalSeconds - a.totalSeconds);
  return { durationSeconds: Number(profile.durationNanos) / 1e9, cpuSeconds: cpuNanos / 1e9, functions: out };
}

/**
 * Go CPU profiles (one per app node, of the same window) in the run result's stored form
 * (results/profile.ts), so the profile diff judges them as it does py-spy's: each
 * sample's stack root first, inlined calls expanded, its CPU time counted in sampling
 * periods. The nodes' profiles are pooled: the run's requests are the whole cluster's.
 */
export function goStoredProfile(profiles: readonly Uint8Array[], window: { windowSec: number }): StoredProfile {
  const frames: ProfileFrame[] = [];
  const frameIndex = new Map<string, number>();
  const stacks = new Map<string, { frames: number[]; samples: number }>();
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
      const frame: ProfileFrame = { name: str(f.name), file: str(f.filename), ...(Number(f.startLine) > 0 ? { line: Number(f.startLine) } : {}) };
      const key = `${frame.name}\u0000${frame.file}\u0000${frame.line ?? ''}`;
      if (!frameIndex.has(key)) {
        frameIndex.set(key, frames.length);
        frames.push(frame);
      }
      fnIndex.set(String(f.id), frameIndex.get(key) as number);
    }
    const locations = new Map<string, number[]>();
    for (const loc of profile.location) locations.set(String(loc.id), loc.line.flatMap((l) => fnIndex.get(String(l.functionId)) ?? []));
    for (const sample of profile.sample) {
      const nanos = Number(sample.value[cpuIndex] ?? 0);
      // Leaf first, innermost inlined call first: reversed, root first.
      const stack = sample.locationId.flatMap((id) => locations.get(String(id)) ?? []).reverse();
      if (nanos <= 0 || stack.length === 0) continue;
      const key = stack.join(',');
      const entry = stacks.get(key) ?? { frames: stack, samples: 0 };
      entry.samples += nanos / periodNanos;
      stacks.set(key, entry);
    }
  }
  if (sampleSec === undefined || coveredSec <= 0) throw new Error('no CPU profile to store');
  // A profile that ran on past a test that stopped early covers at most the window.
  return storedProfileSchema.parse({ tool: 'Go pprof', sampleSec, windowSec: window.windowSec, coveredSec: Math.min(coveredSec, window.windowSec), frames, stacks: [...stacks.values()] });
}
