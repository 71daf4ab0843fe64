import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { benchCpuList, measureOutsideCpu, outsideCpuQueries, outsideCpuShare } from '../../src/bench/local/outside-cpu.ts';
import {
  parseTreeStat,
  readTreeStats,
  RisingCounter,
  startProcessExporter,
  treeCpuSeconds,
  treeMembers,
  type TreeStat,
} from '../../src/bench/local/process-exporter.ts';
import type { InstantSample } from '../../src/metrics/prometheus.ts';
import { allocatePort } from '../../src/util/ports.ts';

test("the outside share is the bench cores' busy CPU less the bench's own, as % of those cores over the window", () => {
  // 2 cores × 100 s = 200 CPU s; busy 150, bench 100 → other work 50 CPU s = 25 %.
  assert.deepEqual(outsideCpuShare({ hostBusySec: 150, benchSec: 100, cores: 2, windowSec: 100, limitPercent: 25 }), {
    percent: 25,
    hostPercent: 75,
    benchPercent: 50,
    limitPercent: 25,
  });
  // Counters scraped at different instants can put the bench a little above the host: that is no negative load.
  assert.equal(outsideCpuShare({ hostBusySec: 99, benchSec: 100, cores: 2, windowSec: 100, limitPercent: 25 }).percent, 0);
});

test('an absent series is unknown, not zero: the share is not measured and says which series had no samples', () => {
  const noHost = outsideCpuShare({ hostBusySec: null, benchSec: 100, cores: 2, windowSec: 100, limitPercent: 25 });
  assert.equal(noHost.percent, undefined);
  assert.match(noHost.unmeasured ?? '', /no samples of node_exporter's busy CPU in the measured window/);
  // Had an absent bench counter been read as zero, all 150 busy CPU s would have counted as other work (75 %).
  const noBench = outsideCpuShare({ hostBusySec: 150, benchSec: null, cores: 2, windowSec: 100, limitPercent: 25 });
  assert.equal(noBench.percent, undefined);
  assert.match(noBench.unmeasured ?? '', /loadgate_bench_cpu_seconds_total/);
  assert.match(outsideCpuShare({ hostBusySec: 1, benchSec: 1, cores: 2, windowSec: 0, limitPercent: 25 }).unmeasured ?? '', /window is empty/);
});

test("the queries read the bench's cores over the measured window, at its end; an empty answer is unmeasured", async () => {
  assert.equal(benchCpuList('0', '1'), '0,1');
  assert.equal(benchCpuList('0-1', '1,3'), '0,1,3');
  const q = outsideCpuQueries('0,1', 150);
  assert.equal(q.hostBusy, 'sum(increase(node_cpu_seconds_total{job="node",mode!~"idle|iowait",cpu=~"0|1"}[150s]))');
  assert.equal(q.bench, 'sum(increase(loadgate_bench_cpu_seconds_total{job="process"}[150s]))');
  const asked: { promql: string; time: number | undefined }[] = [];
  const prometheus = (answers: Record<string, number | undefined>) => ({
    async query(promql: string, time?: number): Promise<InstantSample[]> {
      asked.push({ promql, time });
      const value = promql.includes('node_cpu') ? answers.host : answers.bench;
      return value === undefined ? [] : [{ labels: {}, value }];
    },
  });
  const window = { stableStart: 1000, stableEnd: 1150 };
  const cpus = { target: '0', engine: '1' };
  // 2 cores × 150 s = 300 CPU s: busy 240, bench 120 → 40 %.
  const busy = await measureOutsideCpu(prometheus({ host: 240, bench: 120 }), window, cpus, 25);
  assert.deepEqual(busy, { percent: 40, hostPercent: 80, benchPercent: 40, limitPercent: 25 });
  assert.deepEqual(
    asked.map((a) => a.time),
    [1150, 1150],
  );
  const missing = await measureOutsideCpu(prometheus({ host: 240 }), window, cpus, 25);
  assert.equal(missing.percent, undefined);
  assert.match(missing.unmeasured ?? '', /no samples of the bench's own CPU/);
  const down = await measureOutsideCpu({ query: () => Promise.reject(new Error('connection refused')) }, window, cpus, 25);
  assert.match(down.unmeasured ?? '', /Prometheus did not answer: connection refused/);
});

test("the bench's CPU is its root process and every descendant, reaped children included, and nothing else", () => {
  // Fields after comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime.
  const stat = (pid: number, ppid: number, ticks: [number, number, number, number]) =>
    `${pid} (a (b) c) S ${ppid} ${pid} 1 0 -1 0 0 0 0 0 ${ticks.join(' ')} 20 0 1 0`;
  const parsed = parseTreeStat(stat(10, 1, [100, 50, 30, 20]), 100);
  assert.deepEqual(parsed, { pid: 10, ppid: 1, cpuSeconds: 2 });
  assert.equal(parseTreeStat('10 (x) S', 100), undefined);
  const stats: TreeStat[] = [
    { pid: 1, ppid: 0, cpuSeconds: 1000 }, // init: not the bench
    { pid: 10, ppid: 1, cpuSeconds: 2 }, // loadgate
    { pid: 11, ppid: 10, cpuSeconds: 3 }, // postgres
    { pid: 12, ppid: 11, cpuSeconds: 4 }, // a backend
    { pid: 20, ppid: 1, cpuSeconds: 50 }, // other work
  ];
  assert.equal(treeCpuSeconds(stats, 10), 9);
  assert.deepEqual(
    treeMembers(stats, 10)
      .map((s) => s.pid)
      .sort(),
    [10, 11, 12],
  );
  assert.equal(treeCpuSeconds(stats, 99), 0);
});

test('the bench counter only rises: a process leaving the tree is no counter reset', () => {
  const c = new RisingCounter();
  assert.equal(c.add(10), 0);
  assert.equal(c.add(12.5), 2.5);
  assert.equal(c.add(4), 2.5); // an orphan left the tree
  assert.equal(c.add(5), 3.5);
});

test("on this machine, a child is in the bench's tree and an orphaned process is not; the exporter serves the bench counter", async () => {
  // A child of this process, and an orphan: `sh` starts a sleeper in the background and exits,
  // so the sleeper is reparented away from this process, as other work is not ours.
  const child = spawn('sleep', ['30'], { stdio: 'ignore' });
  const sh = spawn('sh', ['-c', 'sleep 30 & echo $!'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  sh.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise((r) => sh.once('exit', r));
  const orphan = Number(out.trim());
  const port = await allocatePort();
  const exporter = await startProcessExporter(port);
  try {
    const members = treeMembers(await readTreeStats(), process.pid).map((s) => s.pid);
    assert.ok(members.includes(process.pid) && members.includes(child.pid!), 'this process and its child are the bench');
    assert.ok(orphan > 0 && !members.includes(orphan), `the orphan ${orphan} is not`);
    const read = async () => Number(/^loadgate_bench_cpu_seconds_total (\S+)$/m.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1]);
    const first = await read();
    // A busy child, reaped before the next scrape: its CPU stays in this process's cutime.
    const busy = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end);'], { stdio: 'ignore' });
    await new Promise((r) => busy.once('exit', r));
    const after = await read();
    assert.ok(after - first > 0.05, `the reaped busy child's CPU is counted: ${first} → ${after}`);
  } finally {
    child.kill();
    try {
      process.kill(orphan);
    } catch {
      /* gone */
    }
    await exporter.close();
  }
});
