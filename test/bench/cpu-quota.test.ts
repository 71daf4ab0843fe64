import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createQuotaGroup, detectCgroup } from '../../src/bench/local/cpu-quota.ts';
import { cpuCount } from '../../src/metrics/target-cpus.ts';

/** A temp dir stands in for /sys/fs/cgroup: the same files the kernel exposes. */
async function fakeRoot(version: 1 | 2): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'lg-cgroup-'));
  if (version === 2) {
    await writeFile(join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    await writeFile(join(root, 'cgroup.subtree_control'), 'memory pids\n');
    await writeFile(join(root, 'cgroup.procs'), '');
  } else {
    await mkdir(join(root, 'cpu,cpuacct'));
    await writeFile(join(root, 'cpu,cpuacct', 'cpu.cfs_quota_us'), '-1\n');
    await writeFile(join(root, 'cpu,cpuacct', 'cgroup.procs'), '');
  }
  return root;
}

const gone = (p: string) =>
  access(p).then(
    () => false,
    () => true,
  );

test('cgroup v2: cpu enabled in the parent, cpu.max = quota and period, the pid moved in and back out', async () => {
  const root = await fakeRoot(2);
  try {
    const layout = await detectCgroup(root);
    assert.deepEqual(layout, { version: 2, dir: root });
    const group = await createQuotaGroup(layout, 'loadgate-candidate', 0.88, cpuCount('0'));
    assert.equal(await readFile(join(root, 'cgroup.subtree_control'), 'utf8'), '+cpu');
    assert.equal(await readFile(join(group.path, 'cpu.max'), 'utf8'), '88000 100000');
    await group.add(4242);
    assert.equal(await readFile(join(group.path, 'cgroup.procs'), 'utf8'), '4242');
    await rm(join(group.path, 'cgroup.procs'));
    await rm(join(group.path, 'cpu.max'));
    await group.release();
    assert.equal(await readFile(join(root, 'cgroup.procs'), 'utf8'), '4242');
    assert.ok(await gone(group.path));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('cgroup v1: cfs period and quota over the target cores in the cpu hierarchy', async () => {
  const root = await fakeRoot(1);
  try {
    const layout = await detectCgroup(root);
    assert.deepEqual(layout, { version: 1, dir: join(root, 'cpu,cpuacct') });
    const group = await createQuotaGroup(layout, 'loadgate-candidate', 0.5, cpuCount('0-1'));
    assert.equal(await readFile(join(group.path, 'cpu.cfs_period_us'), 'utf8'), '100000');
    assert.equal(await readFile(join(group.path, 'cpu.cfs_quota_us'), 'utf8'), '100000');
    await group.add(77);
    assert.equal(await readFile(join(group.path, 'cgroup.procs'), 'utf8'), '77');
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('no cpu controller, or a fraction outside (0, 1], is an error that says why', async () => {
  const root = await mkdtemp(join(tmpdir(), 'lg-cgroup-'));
  try {
    await assert.rejects(detectCgroup(root), /no cgroup cpu controller found/);
    await assert.rejects(createQuotaGroup({ version: 2, dir: root }, 'x', 1.5, 1), /CPU quota must be in \(0, 1\]/);
    assert.equal(cpuCount('0,2-3'), 3);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
