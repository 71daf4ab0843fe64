import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseProbeOutput, probeOnce, SPEED_PROBE_WORKLOAD, startSpeedProbe, summarizeProbes } from '../../src/bench/local/speed-probe.ts';

test('a probe prints its CPU time in ms; anything else is an error that quotes it', () => {
  assert.equal(parseProbeOutput('57.613\n'), 57.613);
  assert.throws(() => parseProbeOutput('Traceback (most recent call last)'), /the speed probe printed "Traceback \(most recent call last\)", not a CPU time in ms/);
  assert.throws(() => parseProbeOutput('0.000'), /not a CPU time/);
});

test('the summary: median (odd and even counts), min, max, count and the workload', () => {
  assert.deepEqual(summarizeProbes([60, 57.5, 100.25]), { workload: SPEED_PROBE_WORKLOAD, samples: 3, cpuMsMedian: 60, cpuMsMin: 57.5, cpuMsMax: 100.25 });
  assert.equal(summarizeProbes([58, 60, 62, 100])!.cpuMsMedian, 61);
  assert.equal(summarizeProbes([]), undefined);
});

test('the real workload runs pinned to a core and takes a positive CPU time', { timeout: 30_000 }, async () => {
  const ms = await probeOnce({ python: 'python3', cpus: '0' });
  assert.ok(ms > 0 && ms < 5000, `${ms} ms`);
});

test('the probe loop samples until stopped, and a broken interpreter is reported, not thrown', { timeout: 30_000 }, async () => {
  const probe = startSpeedProbe({ python: 'python3', cpus: '0', intervalSec: 0.05 });
  await new Promise((r) => setTimeout(r, 1500));
  const { summary, failures } = await probe.stop();
  assert.deepEqual(failures, []);
  assert.ok(summary && summary.samples >= 2, JSON.stringify(summary));
  const broken = startSpeedProbe({ python: '/nonexistent/python3', cpus: '0', intervalSec: 0.05 });
  await new Promise((r) => setTimeout(r, 200));
  const none = await broken.stop();
  assert.equal(none.summary, undefined);
  assert.equal(none.failures.length, 1, 'the same failure is listed once');
  assert.match(none.failures[0]!, /taskset failed/);
});
