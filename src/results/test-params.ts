import type { TestSpec } from '../config/schema.ts';
import type { RunResult } from './schema.ts';

/**
 * A test as a run result records it: the config's parameters in seconds, and the enabled
 * health queries with the bench's placeholders filled in (`expandQuery`), so a result
 * says exactly what the coordinator evaluated.
 */
export function testParams(test: TestSpec, expandQuery: (query: string) => string): RunResult['test'] {
  if (test.type === 'bounded') {
    return { type: 'bounded', name: test.name, users: test.users, rampUpSec: test.rampUp, durationSec: test.duration };
  }
  return {
    type: 'unbounded',
    name: test.name,
    maxUsers: test.maxUsers,
    ...(test.initialUsers ? { initialUsers: test.initialUsers } : {}),
    usersIncrement: test.usersIncrement,
    usersDecrement: test.usersDecrement,
    restSec: test.restTime,
    stabilityWindowSec: test.stabilityWindow,
    maxDurationSec: test.maxDuration,
    health: test.health.filter((h) => h.enabled).map((h) => ({ name: h.name, query: expandQuery(h.query), threshold: h.threshold })),
  };
}
