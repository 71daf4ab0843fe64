import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseRunResult } from '../results/load.ts';
import type { RunResult } from '../results/schema.ts';
import type { CapacityEntry } from '../noise/schema.ts';
import { workloadName } from '../noise/speed.ts';

/**
 * Where an unbounded test's warm start gets its hint, best first:
 *   1. an earlier converged run of the same test and side in this gate (this bench,
 *      today), else of the other side: the two sides may differ in more than the
 *      version (a CPU quota on one side, a known loss), and a side's own last answer
 *      is the closer start;
 *   2. `--expect-users`;
 *   3. the newest converged run of that version and test on the same bench kind in the
 *      `--history` folder;
 *   4. the capacity the profile's noise model states (calibrated, or assumed from the seed
 *      reports), scaled down by this machine's speed at set-up where it is slower than
 *      the speed that capacity was measured at (never up): so a first gate, and every
 *      AWS gate, starts at or below the ceiling instead of climbing from initialUsers.
 * Nothing else: results lying under the working directory may come from another machine
 * or profile, and a hint far above the ceiling costs minutes of overload.
 * Hints only choose where the search starts: it starts below them and climbs. A hint that
 * is too high is caught by the first alert while ramping, but a start far above the
 * ceiling can leave a side still coming down through its window, so the sources err low.
 */

export interface CapacityHint {
  users: number;
  source: string;
}

/** The speed probe at set-up: median CPU ms of its workload (`python-json-v1@setup CPython 3.11.7`). */
export interface MachineSpeed {
  workload: string;
  cpuMs: number;
}

export interface HintSettings {
  expectUsers?: number;
  /** `--history`: a folder of earlier run results to scan; none: no hints from outside this gate. */
  historyDir?: string;
  benchKind?: 'local' | 'aws';
}

export class CapacityHints {
  /** Keyed by test, then side ('' when the caller names none). */
  private readonly runs = new Map<string, Map<string, CapacityHint>>();
  /** The newest converged run of each test, whichever side ran it. */
  private readonly latest = new Map<string, CapacityHint>();
  private history: Promise<Map<string, CapacityHint>> | undefined;
  private profile: readonly CapacityEntry[] = [];
  private speed: MachineSpeed | undefined;

  /** One per gate: its runs share what they learn, and nothing outlives it. */
  constructor(private readonly settings: HintSettings = {}) {}

  /** Remembers a converged run's supported users for the later runs of this test. */
  record(testName: string, users: number, source: string, side = ''): void {
    if (!(users > 0)) return;
    const bySide = this.runs.get(testName) ?? new Map<string, CapacityHint>();
    bySide.set(side, { users, source });
    this.runs.set(testName, bySide);
    this.latest.set(testName, { users, source });
  }

  async get(testName: string, version: string, side = ''): Promise<CapacityHint | undefined> {
    const run = this.runs.get(testName)?.get(side) ?? this.latest.get(testName);
    if (run) return run;
    if (this.settings.expectUsers !== undefined) return { users: this.settings.expectUsers, source: '--expect-users' };
    if (this.settings.historyDir) {
      this.history ??= scanHistory(this.settings.historyDir, this.settings.benchKind);
      const past = (await this.history).get(`${version}\u0000${testName}`);
      if (past) return past;
    }
    return this.profileHint(testName);
  }

  /** The noise model's capacities: where a test's search starts when nothing closer is known. */
  useProfileCapacity(entries: readonly CapacityEntry[]): void {
    this.profile = entries;
  }

  /** The machine's speed at set-up, which scales a capacity measured on another machine. */
  setMachineSpeed(speed: MachineSpeed): void {
    this.speed = speed;
  }

  private profileHint(testName: string): CapacityHint | undefined {
    const entry = this.profile.find((e) => e.test === testName);
    if (!entry) return undefined;
    const what = entry.kind === 'measured' ? 'calibrated' : 'assumed';
    const { probe } = entry;
    const speed = this.speed;
    if (probe && speed && workloadName(probe.workload) === workloadName(speed.workload)) {
      // Users scale with the machine's speed, but the probe only ever lowers the start: its
      // reading varies between runs on one machine more than the ceiling does, and a start
      // above the ceiling leaves a side still coming down through its window, where a start
      // below it costs only a short climb (docs/local.md).
      const scaled = (entry.users * probe.cpuMs) / speed.cpuMs;
      const measuredAt = `${round1(entry.users)} users at a speed probe of ${round1(probe.cpuMs)} ms`;
      if (scaled < entry.users)
        return { users: scaled, source: `the profile's ${what} capacity, ${measuredAt}, scaled to this machine's ${round1(speed.cpuMs)} ms` };
      return { users: entry.users, source: `the profile's ${what} capacity, ${measuredAt} (this machine's ${round1(speed.cpuMs)} ms does not raise it)` };
    }
    return { users: entry.users, source: `the profile's ${what} capacity (${entry.source})` };
  }
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

/** A hint's source as progress lines and run results show it: `baseline 1.162.0 run 2`. */
export function hintSource(version: string, repeat: number, side?: string): string {
  return `${side ? `${side} ` : ''}${version} run ${repeat}`;
}

/**
 * Records a completed, converged unbounded result as its side's hint: what a resumed
 * gate (or the next AWS run job) does with the runs it reuses, so each side still
 * starts from its own last answer.
 */
export function recordHint(hints: CapacityHints, result: RunResult, side: string): void {
  if (result.test.type !== 'unbounded' || result.status !== 'completed' || result.problems.length || !result.converged || !result.supportedUsers) return;
  hints.record(result.test.name, result.supportedUsers, hintSource(result.target.version, result.repeat, side), side);
}

/**
 * Every `results/*.json` under `dir` (any depth): the newest converged unbounded run per
 * version and test. Unreadable or invalid files are skipped: a hint is an optimisation,
 * and a report of an older format must not stop a gate.
 */
async function scanHistory(dir: string, benchKind: HintSettings['benchKind']): Promise<Map<string, CapacityHint>> {
  const newest = new Map<string, CapacityHint & { finishedAt: number }>();
  let entries: string[];
  try {
    entries = (await readdir(dir, { recursive: true })).filter((p) => /(^|\/)results\/[^/]+\.json$/.test(p));
  } catch {
    return new Map();
  }
  for (const path of entries.sort()) {
    let result;
    try {
      result = parseRunResult(JSON.parse(await readFile(join(dir, path), 'utf8')), path);
    } catch {
      continue;
    }
    if (result.test.type !== 'unbounded' || !result.converged || result.status !== 'completed' || !result.supportedUsers || result.disturbed) continue;
    if (result.provenance.kind !== 'measured' || (benchKind && result.bench.kind !== benchKind)) continue;
    if (result.target.cpuQuota !== undefined) continue; // a slowed target says nothing of the version's capacity
    const key = `${result.target.version}\u0000${result.test.name}`;
    const finishedAt = Date.parse(result.finishedAt);
    if ((newest.get(key)?.finishedAt ?? -Infinity) < finishedAt) {
      newest.set(key, { users: result.supportedUsers, source: join(dir, path), finishedAt });
    }
  }
  return new Map([...newest].map(([k, v]) => [k, { users: v.users, source: v.source }]));
}
