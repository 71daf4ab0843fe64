import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProbeOutput, probeOnce, SPEED_PROBE_WORKLOAD, startSpeedProbe, summarizeProbes } from '../../src/bench/local/speed-probe.ts';

test('a probe prints its CPU time in ms and the interpreter; anything else is an error that quotes it', () => {
  assert.deepEqual(parseProbeOutput('57.613 CPython 3.11.2\n'), { cpuMs: 57.613, interpreter: 'CPython 3.11.2' });
  assert.throws(() => parseProbeOutput('Traceback (most recent call last)'), /the speed probe printed "Traceback \(most recent call last\)", not a CPU time in ms/);
  assert.throws(() => parseProbeOutput('0.000 CPython 3.11.2'), /not a CPU time/);
  assert.throws(() => parseProbeOutput('57.6'), /and the interpreter/);
});

test('the summary: median (odd and even counts), min, max, count, and the workload with its interpreter', () => {
  const at = (...ms: number[]) => ms.map((cpuMs) => ({ cpuMs, interpreter: 'CPython 3.11.2' }));
  assert.deepEqual(summarizeProbes(at(60, 57.5, 100.25)), { workload: `${SPEED_PROBE_WORKLOAD} CPython 3.11.2`, samples: 3, cpuMsMedian: 60, cpuMsMin: 57.5, cpuMsMax: 100.25 });
  assert.equal(summarizeProbes(at(58, 60, 62, 100))!.cpuMsMedian, 61);
  assert.equal(summarizeProbes([]), undefined);
});

test('the real workload runs pinned to a core and takes a positive CPU time', { timeout: 30_000 }, async () => {
  const { cpuMs, interpreter } = await probeOnce({ python: 'python3', cpus: '0' });
  assert.ok(cpuMs > 0 && cpuMs < 5000, `${cpuMs} ms`);
  assert.match(interpreter, /^\w+ \d+\.\d+\.\d+/);
});

test('the probe loop samples until stopped, and a broken interpreter is reported, not thrown', { timeout: 30_000 }, async () => {
  const probe = startSpeedProbe({ python: 'python3', cpus: '0', intervalSec: 0.05 });
  await new Promise((r) => setTimeout(r, 1500));
  const { summary, failures } = await probe.stop();
  assert.deepEqual(failures, []);
  assert.ok(summary && summary.samples >= 1, JSON.stringify(summary));
  assert.match(summary.workload, new RegExp(`^${SPEED_PROBE_WORKLOAD} \\w+ \\d`));
  const broken = startSpeedProbe({ python: '/nonexistent/python3', cpus: '0', intervalSec: 0.05 });
  await new Promise((r) => setTimeout(r, 200));
  const none = await broken.stop();
  assert.equal(none.summary, undefined);
  assert.equal(none.failures.length, 1, 'the same failure is listed once');
  assert.match(none.failures[0]!, /taskset failed/);
});
