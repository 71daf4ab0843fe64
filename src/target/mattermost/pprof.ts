import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

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
