import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runResultSchema, type RunResult, type RunResultInput } from '../../src/results/schema.ts';
import { syntheticRun, type BoundedSpec, type CommonSpec, type UnboundedSpec } from '../../scripts/lib/synthetic-runs.ts';

const COMMON: CommonSpec = {
  system: 'synapse',
  provenance: { kind: 'reconstructed', note: 'test fixture' },
  bench: { kind: 'local', versions: { engine: 'k6 v1.4.2' } },
  handlers: ['RoomMessageListRestServlet', 'RoomSendEventRestServlet', 'SyncRestServlet', 'LoginRestServlet'],
  storeMethods: ['get_recent_events', 'persist_events', 'get_sync', 'get_user_by_id'],
  stepSec: 5,
};

export function bounded(version: string, repeat = 0, extra: Partial<BoundedSpec> = {}): RunResult {
  const spec: BoundedSpec = {
    type: 'bounded',
    name: 'bounded',
    version,
    repeat,
    seed: 'test',
    users: 40,
    rampUpSec: 30,
    durationSec: 150,
    errors: 0,
    timeouts: 0,
    ...extra,
  };
  return runResultSchema.parse(syntheticRun(COMMON, spec));
}

export function unbounded(version: string, supportedUsers: number, repeat = 0, extra: Partial<UnboundedSpec> = {}): RunResult {
  const spec: UnboundedSpec = {
    type: 'unbounded',
    name: 'unbounded',
    version,
    repeat,
    seed: 'test',
    maxUsers: 400,
    supportedUsers,
    stabilityWindowSec: 60,
    durationSec: 240,
    errors: 0,
    timeouts: 0,
    ...extra,
  };
  return runResultSchema.parse(syntheticRun(COMMON, spec));
}

export function asInput(run: RunResult): RunResultInput {
  return JSON.parse(JSON.stringify(run)) as RunResultInput;
}

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
