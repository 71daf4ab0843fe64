import { ProfileBuilder, type ProfileFrame, type StoredProfile } from '../../results/profile.ts';

/**
 * py-spy's `--format raw` output: one line per distinct stack, root first, frames joined
 * by ";" and the sample count after the last space. A frame is `name (file:line)`, or the
 * bare name when py-spy has no line for it (py-spy src/flamegraph.rs, Flamegraph::increment).
 * A sample read while the stack changed (py-spy --nonblocking) can have no frame at all: its
 * line is the count alone, kept as UNKNOWN_FRAME, since it was CPU time all the same.
 */

const UNKNOWN_FRAME = '(no Python frame)';

/** Frames and stacks of one raw file, frames deduplicated. */
export interface CollapsedStacks {
  frames: ProfileFrame[];
  stacks: { frames: number[]; samples: number }[];
}

const FRAME = /^(.*) \((.*):(\d+)\)$/;

function parseFrame(text: string): ProfileFrame {
  const m = FRAME.exec(text);
  if (!m) return { name: text, file: '' };
  return { name: m[1] as string, file: m[2] as string, line: Number(m[3]) };
}

/** Parses raw collapsed stacks; `source` names the file in an error. */
export function parseCollapsed(text: string, source: string): CollapsedStacks {
  const profile = new ProfileBuilder();
  // A frame's text is parsed once; the builder interns it.
  const ids = new Map<string, number>();
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = (lines[n] as string).trimEnd();
    if (!line) continue;
    const space = line.lastIndexOf(' ');
    const samples = Number(line.slice(space + 1));
    if (space < 0 || !Number.isInteger(samples) || samples <= 0) throw new Error(`${source}:${n + 1}: not a py-spy raw line (stack, a space, a sample count)`);
    const stack = line.slice(0, space).trim() || UNKNOWN_FRAME;
    profile.add(
      stack.split(';').map((f) => ids.get(f) ?? (ids.set(f, profile.frame(parseFrame(f))).get(f) as number)),
      samples,
    );
  }
  return { frames: profile.frames, stacks: profile.stacks };
}

/** Recordings over consecutive spans, each weighted by the share of it inside a window. */
export interface WeightedRecording {
  stacks: CollapsedStacks;
  /** 0..1: how much of the recording's span lies in the window. */
  weight: number;
  /** Seconds of the window the recording covers. */
  coveredSec: number;
}

/** Merges recordings into one stored profile; undefined when none covers the window. */
export function mergeRecordings(
  recordings: readonly WeightedRecording[],
  o: { tool: string; sampleSec: number; windowSec: number },
): StoredProfile | undefined {
  const profile = new ProfileBuilder();
  let coveredSec = 0;
  for (const r of recordings) {
    if (r.weight <= 0) continue;
    coveredSec += r.coveredSec;
    const ids = r.stacks.frames.map((f) => profile.frame(f));
    for (const s of r.stacks.stacks)
      profile.add(
        s.frames.map((i) => ids[i] as number),
        s.samples * r.weight,
      );
  }
  const stacks = profile.stacks;
  if (coveredSec <= 0 || !stacks.length) return undefined;
  return { tool: o.tool, sampleSec: o.sampleSec, windowSec: o.windowSec, coveredSec: Math.min(coveredSec, o.windowSec), frames: profile.frames, stacks };
}
