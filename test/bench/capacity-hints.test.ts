import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapacityHints } from '../../src/bench/capacity-hints.ts';
import { asInput, unbounded } from '../support/runs.ts';

test('hints: an earlier run of this gate, then --expect-users, then the newest measured --history run of that version', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-hints-'));
  try {
    const measured = (users: number, finishedAt: string, kind: 'local' | 'aws' = 'local') => ({
      ...asInput(unbounded('1.162.0', users)),
      provenance: { kind: 'measured' as const },
      converged: true,
      status: 'completed' as const,
      startedAt: '2026-11-01T00:00:00.000Z',
      finishedAt,
      bench: { kind, versions: {} },
    });
    await mkdir(join(dir, 'local/a/results'), { recursive: true });
    await mkdir(join(dir, 'local/b/results'), { recursive: true });
    await writeFile(join(dir, 'local/a/results/old.json'), JSON.stringify(measured(70, '2026-11-02T00:00:00.000Z')));
    await writeFile(join(dir, 'local/b/results/new.json'), JSON.stringify(measured(90, '2026-11-03T00:00:00.000Z')));
    await writeFile(join(dir, 'local/b/results/aws.json'), JSON.stringify(measured(17000, '2026-11-04T00:00:00.000Z', 'aws')));
    await writeFile(join(dir, 'local/b/results/broken.json'), '{ not json');
    // Newer, but measured under a CPU quota (a known loss): never a hint for the version.
    const slowed = measured(60, '2026-11-05T00:00:00.000Z');
    await writeFile(join(dir, 'local/b/results/quota.json'), JSON.stringify({ ...slowed, target: { ...slowed.target, cpuQuota: 0.88 } }));

    const history = new CapacityHints({ historyDir: dir, benchKind: 'local' });
    assert.deepEqual(await history.get('unbounded', '1.162.0'), { users: 90, source: join(dir, 'local/b/results/new.json') });
    assert.equal(await history.get('unbounded', '9.9.9'), undefined, 'no run of that version');
    assert.equal(await new CapacityHints({ benchKind: 'local' }).get('unbounded', '1.162.0'), undefined, 'no --history: no hint from outside the gate');

    const hints = new CapacityHints({ historyDir: dir, benchKind: 'local', expectUsers: 120 });
    assert.deepEqual(await hints.get('unbounded', '1.162.0'), { users: 120, source: '--expect-users' });

    hints.record('unbounded', 101.5, '1.162.0 run 0');
    assert.deepEqual(await hints.get('unbounded', '1.163.2'), { users: 101.5, source: '1.162.0 run 0' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("hints in a gate: a side's own last run first, the other side's while it has none", async () => {
  const hints = new CapacityHints({ expectUsers: 120 });
  // A/A with a CPU quota on the candidate: same version, different capacity.
  hints.record('unbounded', 55, 'baseline 1.162.0 run 0', 'baseline');
  assert.deepEqual(
    await hints.get('unbounded', '1.162.0', 'candidate'),
    { users: 55, source: 'baseline 1.162.0 run 0' },
    'the other side before --expect-users',
  );
  hints.record('unbounded', 41, 'candidate 1.162.0 run 0', 'candidate');
  assert.deepEqual(await hints.get('unbounded', '1.162.0', 'baseline'), { users: 55, source: 'baseline 1.162.0 run 0' }, "not the quota'd candidate's 41");
  assert.deepEqual(await hints.get('unbounded', '1.162.0', 'candidate'), { users: 41, source: 'candidate 1.162.0 run 0' });
  assert.deepEqual(await hints.get('unbounded', '1.162.0'), { users: 41, source: 'candidate 1.162.0 run 0' }, 'no side named: the newest run');
  assert.equal(await hints.get('other-test', '1.162.0', 'baseline').then((h) => h?.source), '--expect-users', 'hints are per test');
  hints.record('unbounded', 0, 'baseline 1.162.0 run 1', 'baseline');
  assert.equal((await hints.get('unbounded', '1.162.0', 'baseline'))?.users, 55, 'a run that supported no users is no hint');
});

test("with nothing closer, a test starts from the capacity its profile's model states, scaled down (never up) by this machine's speed at set-up", async () => {
  const hints = new CapacityHints({ benchKind: 'local' });
  assert.equal(await hints.get('unbounded', '1.162.0'), undefined, 'no model capacity: a cold start');
  hints.useProfileCapacity([
    {
      test: 'unbounded',
      users: 30,
      kind: 'measured',
      runs: 8,
      probe: { workload: 'python-json-v1@setup CPython 3.11.7', cpuMs: 40 },
      source: 'median of 8 runs',
    },
    { test: 'other', users: 8600, kind: 'assumed', runs: 0, source: "half the seed report's 17,273" },
  ]);
  // Speed not measured yet: the figure as stated.
  assert.deepEqual(await hints.get('unbounded', '1.162.0'), { users: 30, source: "the profile's calibrated capacity (median of 8 runs)" });
  // This machine's probe takes 60 ms where the calibration's took 40: two thirds of the users.
  hints.setMachineSpeed({ workload: 'python-json-v1@setup CPython 3.12.1', cpuMs: 60 });
  const scaled = await hints.get('unbounded', '1.163.2');
  assert.equal(scaled?.users, 20);
  assert.match(scaled?.source ?? '', /30 users at a speed probe of 40 ms, scaled to this machine's 60 ms/);
  // A probe that reads faster than the calibration's does not raise the start.
  hints.setMachineSpeed({ workload: 'python-json-v1@setup CPython 3.11.7', cpuMs: 20 });
  const faster = await hints.get('unbounded', '1.163.2');
  assert.equal(faster?.users, 30);
  assert.match(faster?.source ?? '', /30 users at a speed probe of 40 ms \(this machine's 20 ms does not raise it\)/);
  // An assumption with no probe is never scaled.
  assert.deepEqual(await hints.get('other', '1.162.0'), { users: 8600, source: "the profile's assumed capacity (half the seed report's 17,273)" });
  // A probe of another workload does not compare: the figure as stated.
  hints.setMachineSpeed({ workload: 'python-json-v2@setup CPython 3.11.7', cpuMs: 60 });
  assert.equal((await hints.get('unbounded', '1.162.0'))?.users, 30);
  // Anything closer wins: --expect-users, then this gate's own runs.
  const closer = new CapacityHints({ expectUsers: 25 });
  closer.useProfileCapacity([{ test: 'unbounded', users: 30, kind: 'measured', runs: 8, source: 'x' }]);
  assert.equal((await closer.get('unbounded', '1.162.0'))?.source, '--expect-users');
  closer.record('unbounded', 27, 'baseline 1.162.0 run 0', 'baseline');
  assert.equal((await closer.get('unbounded', '1.162.0', 'baseline'))?.users, 27);
});
