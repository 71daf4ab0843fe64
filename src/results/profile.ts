import { z } from 'zod';

/**
 * A target's CPU profile over a run's measured window, as stored in the run result (so
 * `compare` can judge it again), and the profile diff a comparison hands the report. Any
 * profiler fits: py-spy's collapsed stacks (Synapse) and Go's pprof samples (Mattermost)
 * both reduce to frames, stacks of frame indices and sample counts.
 */

const finite = z.number().refine(Number.isFinite, 'expected a finite number');
const positive = finite.refine((n) => n > 0, 'expected a number > 0');

const profileFrameSchema = z.strictObject({
  /** Function name as the profiler reports it (py-spy: qualified name; pprof: package.Func). */
  name: z.string().min(1),
  /** Source file as the profiler reports it (py-spy: relative to its import path). */
  file: z.string(),
  /** The function's first line, where the profiler knows it. */
  line: z.number().int().nonnegative().optional(),
});
export type ProfileFrame = z.output<typeof profileFrameSchema>;

export const storedProfileSchema = z
  .strictObject({
    /** Profiler and version, e.g. "py-spy 0.4.3". */
    tool: z.string().min(1),
    /** CPU seconds one sample stands for (1 / sampling rate). */
    sampleSec: positive,
    /** Seconds of the measured window. */
    windowSec: positive,
    /** Seconds of the measured window the samples cover (a profiler may miss short gaps). */
    coveredSec: positive,
    frames: z.array(profileFrameSchema),
    /**
     * Stacks, root first, as indices into `frames`, with their samples: on-CPU samples of
     * any thread. Fractional where a recording straddled the window's edge and was counted pro rata.
     */
    stacks: z.array(z.strictObject({ frames: z.array(z.number().int().nonnegative()).min(1), samples: positive })),
  })
  .refine((p) => p.stacks.every((s) => s.frames.every((i) => i < p.frames.length)), {
    message: 'a stack names a frame index past the end of frames',
    path: ['stacks'],
  })
  .refine((p) => p.coveredSec <= p.windowSec * 1.05, { message: 'coveredSec exceeds windowSec', path: ['coveredSec'] });
export type StoredProfile = z.output<typeof storedProfileSchema>;

/**
 * Builds a profile's frames and stacks: each frame stored once (by name, file and line),
 * each distinct stack once with its samples summed. Every profiler's reader goes through
 * it: py-spy's collapsed stacks, their merge over a window, Go's pprof samples.
 */
export class ProfileBuilder {
  readonly frames: ProfileFrame[] = [];
  private readonly frameIndex = new Map<string, number>();
  private readonly stackIndex = new Map<string, { frames: number[]; samples: number }>();

  /** The frame's index, added when new. */
  frame(f: ProfileFrame): number {
    const key = `${f.name}\u0000${f.file}\u0000${f.line ?? ''}`;
    let id = this.frameIndex.get(key);
    if (id === undefined) {
      id = this.frames.length;
      this.frames.push(f.line === undefined ? { name: f.name, file: f.file } : { name: f.name, file: f.file, line: f.line });
      this.frameIndex.set(key, id);
    }
    return id;
  }

  /** Adds samples to a stack of frame indices, root first. */
  add(frames: readonly number[], samples: number): void {
    if (!(samples > 0) || frames.length === 0) return;
    const key = frames.join(',');
    const entry = this.stackIndex.get(key);
    if (entry) entry.samples += samples;
    else this.stackIndex.set(key, { frames: [...frames], samples });
  }

  get stacks(): { frames: number[]; samples: number }[] {
    return [...this.stackIndex.values()];
  }
}

/** A function's identity in a diff: the same name in the same file (and first line, where known). */
export interface FunctionKey {
  name: string;
  file: string;
  line?: number;
}

/** CPU seconds per 1000 requests served, for one side of the comparison, pooled over the duets. */
export interface SideCost {
  baseline: number;
  candidate: number;
}

/** One function's change between the sides, its CPU per 1000 requests pooled over the duets. */
export interface FunctionChange extends FunctionKey {
  /** CPU-s per 1000 requests in the function itself. */
  selfPerKReq: SideCost;
  /** CPU-s per 1000 requests in the function and everything it called. */
  totalPerKReq: SideCost;
  /** candidate − baseline, CPU-s per 1000 requests (self). */
  change: number;
  /** The change as a share of the baseline's whole CPU per request, %. */
  changePctOfTotal: number;
  /** The candidate's self CPU as a share of its whole CPU per request, %. */
  candidateSharePct: number;
  /** |change| divided by its standard error after the dispersion correction. */
  z: number;
  /** Beyond both the statistical threshold and the material floor (see ProfileDiff.rule). */
  significant: boolean;
}

/** A node of the merged stack tree: both sides' CPU per 1000 requests under one call path. */
export interface DiffNode {
  name: string;
  file: string;
  /** Total (self + callees) CPU-s per 1000 requests. */
  baseline: number;
  candidate: number;
  children: DiffNode[];
}

/** The profile diff of one test, from the runs that carry profiles on both sides. */
export interface ProfileDiff {
  /** Duets (or run pairs) whose profiles were pooled. */
  pairs: number;
  /** Whole-process CPU-s per 1000 requests. */
  totalPerKReq: SideCost;
  /** Functions whose self CPU per request grew most, largest first (at most ten). */
  grown: FunctionChange[];
  /** Functions whose self CPU per request shrank most, largest first (at most ten). */
  shrunk: FunctionChange[];
  /** The merged stack tree for the differential flame graph. */
  tree: DiffNode;
  /** How significance was judged, in words (the rule and the figures it used). */
  rule: string;
  /** Why some runs' profiles were left out. */
  problems: string[];
}

const sideCostSchema = z.strictObject({ baseline: finite, candidate: finite });

const functionChangeSchema = z.strictObject({
  name: z.string().min(1),
  file: z.string(),
  line: z.number().int().nonnegative().optional(),
  selfPerKReq: sideCostSchema,
  totalPerKReq: sideCostSchema,
  change: finite,
  changePctOfTotal: finite,
  candidateSharePct: finite,
  z: finite,
  significant: z.boolean(),
});

const diffNodeSchema: z.ZodType<DiffNode> = z.lazy(() =>
  z.strictObject({ name: z.string(), file: z.string(), baseline: finite, candidate: finite, children: z.array(diffNodeSchema) }),
);

const profileDiffSchema = z.strictObject({
  pairs: z.number().int().positive(),
  totalPerKReq: sideCostSchema,
  grown: z.array(functionChangeSchema),
  shrunk: z.array(functionChangeSchema),
  tree: diffNodeSchema,
  rule: z.string(),
  problems: z.array(z.string()),
});

/**
 * `profile.json` beside verdict.json: each test's profile diff as compare computed it, once.
 * The report renders it, and the publish step reads it for the hot functions' commits; no
 * reader diffs the run results' profiles again.
 */
export const profileFileSchema = z.strictObject({
  /** The chat server the runs ran (RunResult.target.system). */
  system: z.string().min(1),
  baseline: z.string(),
  candidate: z.string(),
  tests: z.array(z.strictObject({ test: z.string(), diff: profileDiffSchema })),
});
export type ProfileFile = z.output<typeof profileFileSchema>;

export const PROFILE_FILE = 'profile.json';
