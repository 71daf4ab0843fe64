import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunResult } from '../../src/results/schema.ts';
import { machineSpeedRow } from '../../src/report/machine-speed.ts';

const run = (cpuMsMedian: number | undefined, workload = 'python-json-v1') =>
  ({ speedProbe: cpuMsMedian === undefined ? undefined : { workload, samples: 10, cpuMsMedian, cpuMsMin: cpuMsMedian - 1, cpuMsMax: cpuMsMedian + 5 } }) as unknown as RunResult;

test('the machine-speed row compares the median probe per run of each side', () => {
  const [name, value] = machineSpeedRow([run(58), run(60), run(59)], [run(61.95), run(61.95)])!;
  assert.equal(name, 'Machine speed (CPU probe)');
  assert.equal(value, "a fixed workload took 59.0 ms of CPU during the baseline's runs (58.0, 60.0, 59.0) and 62.0 ms during the candidate's (62.0, 62.0), median per run: the candidate's runs on a 5.0 % slower machine");
  assert.match(machineSpeedRow([run(60)], [run(57)])![1]!, /on a 5\.0 % faster machine$/);
  assert.match(machineSpeedRow([run(60)], [run(60)])![1]!, /the same speed for both sides$/);
});

test('no row without a probe on both sides; probes of different workloads are not compared', () => {
  assert.equal(machineSpeedRow([run(60)], [run(undefined)]), undefined);
  assert.match(machineSpeedRow([run(60)], [run(60, 'python-json-v2')])![1]!, /not comparable: the runs used different probe workloads \(python-json-v1, python-json-v2\)/);
});
