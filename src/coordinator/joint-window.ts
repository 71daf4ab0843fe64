/**
 * One measurement window for both sides of a duet.
 *
 * The two sides of a duet share the machine, so what one side does moves the other. A side
 * that stops searching (no more users joining and leaving) leaves the machine's other side
 * more of it: had each side stopped at its own equilibrium, the side that settled later would
 * be measured over minutes when its partner had stopped searching, and the two estimates would
 * describe two different machines. So neither side stops alone. Each side says when its search
 * settled and, at every step, whether its estimate over the common part of the two holds would
 * stop it; the first side to see both agree fixes the end, and both sides take their estimate
 * over the same interval of wall-clock time.
 *
 * A side that leaves (it crashed, was aborted, or stopped for a reason of its own) frees its
 * partner to go on alone; the gate then finds the two windows apart and judges neither. A
 * side that leaves after fixing the interval frees nobody: its partner, whose step may have
 * begun before the decision, still ends on that interval.
 */

/** The interval both sides are measured over, in the shared clock's milliseconds. */
export interface JointDecision {
  startMs: number;
  endMs: number;
  /** `settled`: both sides' estimates were sure enough; `max-duration`: time ran out first. */
  cause: 'settled' | 'max-duration';
  /** The side that fixed it. */
  by: string;
}

interface PartyState {
  settledAtMs?: number;
  ready: boolean;
  left: boolean;
}

/** One side's handle on the joint window. */
export interface JointParty {
  readonly name: string;
  /** This side's search settled at `ms` (its hold's first step); later calls keep the first. */
  settled(ms: number): void;
  /** Where the common hold starts (the later side's settling), once every side has settled. */
  commonStartMs(): number | undefined;
  /** This side's judgement at its latest step: its estimate over the common hold would stop it (once true, it stays). */
  ready(ok: boolean): void;
  /** Every side still here is ready. */
  allReady(): boolean;
  /** The agreed interval, once a side has fixed it. */
  decision(): JointDecision | undefined;
  /** Fixes the interval unless a side already did; returns the one in force. */
  decide(window: { startMs: number; endMs: number }, cause: JointDecision['cause']): JointDecision;
  /** Every other side has left before the interval was fixed: this one goes on alone. */
  alone(): boolean;
  /** This side will take no further part. */
  leave(): void;
}

export class JointWindow {
  private readonly parties = new Map<string, PartyState>();
  private decided: JointDecision | undefined;

  constructor(private readonly size = 2) {
    if (!(Number.isInteger(size) && size >= 2)) throw new Error(`a joint window needs at least two sides, got ${size}`);
  }

  /** The handle of side `name`; each side asks once. */
  party(name: string): JointParty {
    if (this.parties.has(name)) throw new Error(`side ${name} already joined this window`);
    if (this.parties.size >= this.size) throw new Error(`this window has its ${this.size} sides already`);
    const me: PartyState = { ready: false, left: false };
    this.parties.set(name, me);
    return {
      name,
      settled: (ms) => {
        me.settledAtMs ??= ms;
      },
      commonStartMs: () => this.commonStartMs(),
      // A side once ready stays ready: its hold was settled enough to stop it, and the users
      // it goes on moving while its partner settles do not undo that. Otherwise both would
      // have to read flat at the same step, which two jittery searches rarely do.
      ready: (ok) => {
        me.ready ||= ok;
      },
      allReady: () => this.present().every((p) => p.ready),
      decision: () => this.decided,
      decide: (window, cause) => {
        this.decided ??= { ...window, cause, by: name };
        return this.decided;
      },
      alone: () => this.decided === undefined && this.parties.size === this.size && [...this.parties.values()].every((p) => p === me || p.left),
      leave: () => {
        me.left = true;
      },
    };
  }

  private present(): PartyState[] {
    return [...this.parties.values()].filter((p) => !p.left);
  }

  private commonStartMs(): number | undefined {
    const all = [...this.parties.values()];
    if (all.length < this.size || all.some((p) => p.settledAtMs === undefined)) return undefined;
    return Math.max(...all.map((p) => p.settledAtMs as number));
  }
}
