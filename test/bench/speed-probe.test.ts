import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MIN_WINDOW_SAMPLES,
  parseProbeOutput,
  probeOnce,
  SPEED_PROBE_WORKLOAD,
  startSpeedProbe,
  summarizeProbes,
  WINDOW_SPAN_SUFFIX,
} from '../../src/bench/local/speed-probe.ts';

test('a probe prints its CPU time in ms and the interpreter; anything else is an error that quotes it', () => {
  assert.deepEqual(parseProbeOutput('57.613 CPython 3.11.2\n'), { cpuMs: 57.613, interpreter: 'CPython 3.11.2' });
  assert.throws(
    () => parseProbeOutput('Traceback (most recent call last)'),
    /the speed probe printed "Traceback \(most recent call last\)", not a CPU time in ms/,
  );
  assert.throws(() => parseProbeOutput('0.000 CPython 3.11.2'), /not a CPU time/);
  assert.throws(() => parseProbeOutput('57.6'), /and the interpreter/);
});

test('the summary: median (odd and even counts), min, max, count, and the workload with its interpreter', () => {
  const at = (...ms: number[]) => ms.map((cpuMs) => ({ cpuMs, interpreter: 'CPython 3.11.2' }));
  assert.deepEqual(summarizeProbes(at(60, 57.5, 100.25)), {
    workload: `${SPEED_PROBE_WORKLOAD} CPython 3.11.2`,
    samples: 3,
    cpuMsMedian: 60,
    cpuMsMin: 57.5,
    cpuMsMax: 100.25,
  });
  assert.equal(summarizeProbes(at(58, 60, 62, 100))!.cpuMsMedian, 61);
  assert.equal(summarizeProbes([]), undefined);
});

test("with a window, only the samples that ended inside it count, under the workload's window name; too few, and the whole run counts under the plain name", () => {
  // One probe every 5 s over a 300 s run: slow (60 ms) during the climb, fast (50 ms) in the hold from 180 s.
  const samples = Array.from({ length: 60 }, (_, i) => ({ cpuMs: 5 + i * 5 < 180 ? 60 : 50, interpreter: 'CPython 3.11.7', atSec: 5 + i * 5 }));
  const held = summarizeProbes(samples, { startSec: 180, endSec: 300 })!;
  assert.equal(held.workload, `${SPEED_PROBE_WORKLOAD}${WINDOW_SPAN_SUFFIX} CPython 3.11.7`);
  assert.equal(held.samples, 25, 'the samples ending at 180, 185 … 300 s');
  assert.deepEqual([held.cpuMsMedian, held.cpuMsMin, held.cpuMsMax], [50, 50, 50]);
  const whole = summarizeProbes(samples)!;
  assert.equal(whole.workload, `${SPEED_PROBE_WORKLOAD} CPython 3.11.7`);
  assert.deepEqual([whole.samples, whole.cpuMsMedian, whole.cpuMsMin], [60, 60, 50], 'the climb (35 samples) outweighs the hold (25)');
  // A window holding one sample fewer than needed reads the whole run.
  const short = summarizeProbes(samples, { startSec: 180, endSec: 180 + 5 * (MIN_WINDOW_SAMPLES - 2) })!;
  assert.deepEqual([short.workload, short.samples], [`${SPEED_PROBE_WORKLOAD} CPython 3.11.7`, 60]);
  const enough = summarizeProbes(samples, { startSec: 180, endSec: 180 + 5 * (MIN_WINDOW_SAMPLES - 1) })!;
  assert.deepEqual([enough.workload.split(' ')[0], enough.samples], [`${SPEED_PROBE_WORKLOAD}${WINDOW_SPAN_SUFFIX}`, MIN_WINDOW_SAMPLES]);
});

test('the real workload runs pinned to a core and takes a positive CPU time', { timeout: 30_000 }, async () => {
  const { cpuMs, interpreter } = await probeOnce({ python: 'python3', cpus: '0' });
  assert.ok(cpuMs > 0 && cpuMs < 5000, `${cpuMs} ms`);
  assert.match(interpreter, /^\w+ \d+\.\d+\.\d+/);
});

test(
  'the probe loop samples until stopped, each sample stamped with its time from the start, and a broken interpreter is reported, not thrown',
  { timeout: 30_000 },
  async () => {
    const probe = startSpeedProbe({ python: 'python3', cpus: '0', intervalSec: 0.05 });
    await new Promise((r) => setTimeout(r, 1500));
    const { samples, failures } = await probe.stop();
    assert.deepEqual(failures, []);
    assert.ok(samples.length >= 1, JSON.stringify(samples));
    const times = samples.map((s) => s.atSec!);
    assert.ok(
      times.every((t, i) => t > 0 && t < 30 && (i === 0 || t > times[i - 1]!)),
      `increasing times from the start: ${times.join(', ')}`,
    );
    assert.match(summarizeProbes(samples)!.workload, new RegExp(`^${SPEED_PROBE_WORKLOAD} \\w+ \\d`));
    const broken = startSpeedProbe({ python: '/nonexistent/python3', cpus: '0', intervalSec: 0.05 });
    await new Promise((r) => setTimeout(r, 200));
    const none = await broken.stop();
    assert.deepEqual(none.samples, []);
    assert.equal(none.failures.length, 1, 'the same failure is listed once');
    assert.match(none.failures[0]!, /taskset failed/);
  },
);
