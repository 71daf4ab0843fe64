import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CapacityHints } from '../../src/run/capacity-hints.ts';
import { asInput, unbounded } from '../support/runs.ts';

test('hints: an earlier run of this gate, then --expect-users, then the newest measured report of that version', async () => {
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

    const hints = new CapacityHints();
    hints.configure({ reportsDir: dir, benchKind: 'local' });
    assert.deepEqual(await hints.get('unbounded', '1.162.0'), { users: 90, source: 'reports/local/b/results/new.json' });
    assert.equal(await hints.get('unbounded', '9.9.9'), undefined, 'no report of that version');

    hints.configure({ reportsDir: dir, benchKind: 'local', expectUsers: 120 });
    assert.deepEqual(await hints.get('unbounded', '1.162.0'), { users: 120, source: '--expect-users' });

    hints.record('unbounded', 101.5, '1.162.0 run 0');
    assert.deepEqual(await hints.get('unbounded', '1.163.2'), { users: 101.5, source: '1.162.0 run 0' });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
