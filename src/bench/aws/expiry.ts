import { TIMING_SEC } from '../../aws/cost.ts';
import type { CommandRunner } from '../../util/command-runner.ts';
import { moveExpirySchedules } from './expiry-schedules.ts';

/**
 * Keeps the bench's `ExpiresAt` tag ahead of what this job still needs. The tag is set at
 * provisioning to the plan's worst case plus an hour, and the janitor destroys a bench on
 * the tag alone, taking the latest value over the bench's resources (src/aws/janitor.ts
 * listBenches): a slower restore or set-up than the plan assumed could otherwise see the
 * bench destroyed under a running job. So before a job waits for the nodes and before
 * each run, the instances' tag is moved to now + what is still needed + the teardown +
 * the plan's hour of margin (`ec2 create-tags`, allowed on resources tagged
 * Project=loadgate). The bench's own expiry follows: the nodes read the tag themselves
 * (infra/aws/modules/bench/templates/common.sh.tftpl), and the schedules that delete its
 * database move by the same amount (expiry-schedules.ts). It is only ever moved later; a
 * failure is a warning, since the plan's expiry still stands.
 */
export const EXPIRY_MARGIN_SEC = 3600;

export interface BenchExpiryOptions {
  aws: CommandRunner;
  region: string;
  /** Every instance of the bench: the janitor reads the latest tag of any resource. */
  instanceIds: readonly string[];
  /** The bench's name, which the group of its expiry schedules carries; without it they stay. */
  scheduleGroup?: string;
  now?: () => number;
  warn: (note: string) => void;
}

export class BenchExpiry {
  private extendedToMs = 0;

  constructor(private readonly o: BenchExpiryOptions) {}

  /** Moves the tag to at least now + `needSec` + teardown + margin; returns the new time, if it moved. */
  async extend(needSec: number): Promise<string | undefined> {
    const now = (this.o.now ?? Date.now)();
    // Whole minutes: the tag changes once per step, not on every call.
    const untilMs = Math.ceil((now + (needSec + TIMING_SEC.teardownOpenSearch + EXPIRY_MARGIN_SEC) * 1000) / 60_000) * 60_000;
    if (untilMs <= this.extendedToMs) return undefined;
    const value = new Date(untilMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const result = await this.o.aws.run('aws', [
      'ec2',
      'create-tags',
      '--region',
      this.o.region,
      '--resources',
      ...this.o.instanceIds,
      '--tags',
      `Key=ExpiresAt,Value=${value}`,
    ]);
    if (result.code !== 0) {
      this.o.warn(
        `could not move the bench's ExpiresAt tag to ${value} (the janitor may destroy the bench at the plan's expiry): ${result.stderr.trim().split('\n').at(-1) ?? ''}`,
      );
      return undefined;
    }
    this.extendedToMs = untilMs;
    if (this.o.scheduleGroup) {
      try {
        await moveExpirySchedules({ aws: this.o.aws, region: this.o.region, group: this.o.scheduleGroup, untilMs });
      } catch (error) {
        this.o.warn(
          `could not move the bench's database expiry schedules to ${value} (EventBridge Scheduler may delete the database at the plan's expiry): ${(error as Error).message}`,
        );
      }
    }
    return value;
  }
}
