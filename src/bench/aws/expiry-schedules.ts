import { z } from 'zod';
import type { CommandRunner } from '../../util/command-runner.ts';

/**
 * The bench's expiry schedules (infra/aws/modules/expiry): one-time EventBridge Scheduler
 * schedules in the group named after the bench delete the Aurora instances, the NAT gateway
 * and the search domain at the bench's expiry and the cluster after them. When a run job
 * moves the ExpiresAt tag later, it moves these by the same amount, keeping their offsets,
 * so the bench outlives every job the tag keeps alive. UpdateSchedule overrides the whole schedule with the request,
 * empty values included (Scheduler API Reference, UpdateSchedule), so each one is read
 * (GetSchedule) and written back with only its at() time changed.
 */

/** at(yyyy-mm-ddThh:mm:ss), read in the schedule's time zone (Scheduler User Guide, schedule types). */
const AT = /^at\((\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})\)$/;

const listSchema = z.object({ Schedules: z.array(z.object({ Name: z.string().min(1) })) });

/** GetSchedule's answer: the fields UpdateSchedule takes back (CreationDate, Arn and the like are left out). */
const scheduleSchema = z.object({
  Name: z.string(),
  GroupName: z.string(),
  ScheduleExpression: z.string(),
  ScheduleExpressionTimezone: z.string().optional(),
  Description: z.string().optional(),
  State: z.string().optional(),
  KmsKeyArn: z.string().optional(),
  ActionAfterCompletion: z.string().optional(),
  FlexibleTimeWindow: z.record(z.string(), z.unknown()),
  Target: z.record(z.string(), z.unknown()),
});
type Schedule = z.output<typeof scheduleSchema>;

const lastLine = (text: string): string => text.trim().split('\n').filter(Boolean).pop() ?? '(no output)';

function parseJson<T>(schema: z.ZodType<T>, text: string, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`${what}: the AWS CLI printed no JSON`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new Error(`${what}: unexpected answer (${parsed.error.issues[0]?.message ?? 'invalid'})`);
  return parsed.data;
}

/** The time a one-time UTC schedule fires, in ms. */
function firesAtMs(schedule: Schedule): number {
  const match = AT.exec(schedule.ScheduleExpression);
  const zone = schedule.ScheduleExpressionTimezone ?? 'UTC';
  if (!match || (zone !== 'UTC' && zone !== 'Etc/UTC')) {
    throw new Error(`schedule ${schedule.Name} is "${schedule.ScheduleExpression}" in ${zone}, not a one-time UTC schedule`);
  }
  return Date.parse(`${match[1]}Z`);
}

const atExpression = (ms: number): string => `at(${new Date(ms).toISOString().slice(0, 19)})`;

export interface MoveSchedulesOptions {
  aws: CommandRunner;
  region: string;
  /** The schedule group: the bench's name. */
  group: string;
  /** The bench's new expiry: the earliest schedule (the instances') moves here. */
  untilMs: number;
}

/**
 * Moves every schedule of the group by how much later `untilMs` is than the earliest of
 * them; returns how many moved (0 when none is earlier, or the bench has no such group).
 * Throws with the reason when one cannot be read or moved.
 */
export async function moveExpirySchedules(o: MoveSchedulesOptions): Promise<number> {
  const aws = async (args: string[]): Promise<string> => {
    const result = await o.aws.run('aws', ['scheduler', ...args, '--region', o.region, '--output', 'json']);
    if (result.code !== 0) throw new Error(`aws scheduler ${args[0]}: ${lastLine(result.stderr)}`);
    return result.stdout;
  };
  let names: string[];
  try {
    names = parseJson(listSchema, await aws(['list-schedules', '--group-name', o.group]), 'list-schedules').Schedules.map((s) => s.Name);
  } catch (error) {
    // A bench made before its database had an expiry has no group: nothing to move.
    if (/ResourceNotFoundException/.test((error as Error).message)) return 0;
    throw error;
  }
  const schedules: Schedule[] = [];
  for (const name of names)
    schedules.push(parseJson(scheduleSchema, await aws(['get-schedule', '--group-name', o.group, '--name', name]), `get-schedule ${name}`));
  if (!schedules.length) return 0;
  const times = schedules.map(firesAtMs);
  const shiftMs = o.untilMs - Math.min(...times);
  if (shiftMs <= 0) return 0;
  for (const [i, schedule] of schedules.entries()) {
    const input = { ...schedule, ScheduleExpression: atExpression(times[i]! + shiftMs) };
    await aws(['update-schedule', '--cli-input-json', JSON.stringify(input)]);
  }
  return schedules.length;
}
