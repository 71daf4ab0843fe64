import { test } from 'node:test';
import assert from 'node:assert/strict';
import { countCpus, parseProcStat, processCpuSeconds } from '../../../src/engine/k6/process-cpu.ts';

test('parses utime and stime, even when the command name has spaces and parentheses', () => {
  const line = '4242 (k6 (run) x) S 1 4242 4242 0 -1 4194560 9000 0 0 0 250 130 0 0 20 0 12 0 100 0 0';
  // utime 250 + stime 130 ticks at 100 Hz
  assert.equal(parseProcStat(line), 3.8);
  assert.throws(() => parseProcStat('garbage'), /unexpected \/proc stat format/);
});

test('measures a real process and answers undefined for one that is gone', async () => {
  const before = await processCpuSeconds(process.pid);
  const usageBefore = process.cpuUsage();
  // Burn 150 ms of CPU time (not wall time: the machine may be busy).
  while (process.cpuUsage(usageBefore).user + process.cpuUsage(usageBefore).system < 150_000);
  const burnt = (process.cpuUsage(usageBefore).user + process.cpuUsage(usageBefore).system) / 1e6;
  const after = await processCpuSeconds(process.pid);
  assert.ok(before !== undefined && after !== undefined);
  // /proc counts in 10 ms ticks and includes node's other threads.
  assert.ok(after - before >= burnt - 0.03, `/proc says ${after - before} s, node says ${burnt} s`);
  assert.equal(await processCpuSeconds(2 ** 22 + 12345), undefined);
});

test('counts the CPUs of a taskset list', () => {
  assert.equal(countCpus('1'), 1);
  assert.equal(countCpus('0-1'), 2);
  assert.equal(countCpus('0,2-3,7'), 4);
  assert.throws(() => countCpus('3-1'), /invalid CPU list/);
});
