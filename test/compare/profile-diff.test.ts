import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffProfiles } from '../../src/compare/profile-diff.ts';
import { parseCollapsed } from '../../src/chat-servers/synapse/py-spy-raw.ts';
import type { RunResult } from '../../src/results/schema.ts';
import { bounded } from '../support/runs.ts';
import { duets } from '../support/profiles.ts';

test('the function with injected CPU is the top grown one, significant, over three duets', () => {
  const { baseline, candidate } = duets('inj', 3);
  const diff = diffProfiles(baseline, candidate);
  assert.ok(diff);
  assert.equal(diff.pairs, 3);
  const top = diff.grown[0];
  assert.ok(top);
  assert.equal(top.name, 'load_rows');
  assert.equal(top.file, 'workload.py');
  assert.equal(top.line, 25, "py-spy --function reports the function's first line");
  assert.ok(top.significant, `load_rows grew but was not judged significant: ${diff.rule}; z ${top.z}`);
  assert.ok(top.selfPerKReq.candidate > 1.5 * top.selfPerKReq.baseline);
  assert.ok(diff.totalPerKReq.candidate > diff.totalPerKReq.baseline);
  // Its callers grew in total (self + callees), not in self.
  const handle = diff.grown.find((f) => f.name === 'handle') ?? diff.shrunk.find((f) => f.name === 'handle');
  assert.ok(!handle?.significant);
});

test('with one duet the sampling-noise rule still finds the injected function', () => {
  const { baseline, candidate } = duets('inj', 1);
  const diff = diffProfiles(baseline, candidate);
  assert.ok(diff);
  assert.equal(diff.pairs, 1);
  assert.equal(diff.grown[0]?.name, 'load_rows');
  assert.ok(diff.grown[0]?.significant);
});

test('an A/A comparison reports no significant function, with three duets or one', () => {
  for (const count of [3, 1]) {
    const { baseline, candidate } = duets('aa', count);
    const diff = diffProfiles(baseline, candidate);
    assert.ok(diff);
    const flagged = [...diff.grown, ...diff.shrunk].filter((f) => f.significant).map((f) => `${f.name} z=${f.z.toFixed(1)}`);
    assert.deepEqual(flagged, [], `A/A with ${count} duet(s): ${diff.rule}`);
  }
});

test('the merged tree holds both sides: its root is the whole CPU per request of each', () => {
  const { baseline, candidate } = duets('inj', 3);
  const diff = diffProfiles(baseline, candidate);
  assert.ok(diff);
  assert.ok(Math.abs(diff.tree.baseline - diff.totalPerKReq.baseline) < 1e-9);
  assert.ok(Math.abs(diff.tree.candidate - diff.totalPerKReq.candidate) < 1e-9);
  const path = (n: typeof diff.tree, name: string): boolean => n.name === name || n.children.some((c) => path(c, name));
  assert.ok(path(diff.tree, 'load_rows'));
});

test('runs without a profile are named and left out; no pair with profiles gives no diff', () => {
  const { baseline, candidate } = duets('inj', 2);
  const bare = { ...candidate[1], profile: undefined } as RunResult;
  const diff = diffProfiles(baseline, [candidate[0] as RunResult, bare]);
  assert.equal(diff?.pairs, 1);
  assert.match(diff?.problems.join('\n') ?? '', /1\.1\.0 repeat 1 has no profile/);
  assert.equal(diffProfiles([bounded('1.0.0')], [bounded('1.1.0')]), undefined);
});

test('a malformed raw line names the file and line', () => {
  assert.throws(() => parseCollapsed('main (a.py:1) 3\nmain (a.py:1);f (a.py:4) x\n', 'side.txt'), /side\.txt:2: not a py-spy raw line/);
});
