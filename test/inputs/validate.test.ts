import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGateConfig } from '../../src/config/load.ts';
import { validateGateInputs, validateVersionLabel } from '../../src/inputs/validate.ts';
import { InputError } from '../../src/util/errors.ts';

const config = parseGateConfig(
  {
    version: 1,
    name: 'synapse-local',
    target: { system: 'synapse', versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$' },
    bench: { kind: 'local' },
    repeats: 3,
    tests: [
      { type: 'bounded', users: 40, rampUp: '30s', duration: '2m30s' },
      { type: 'unbounded', maxUsers: 400, stabilityWindow: '60s', maxDuration: '4m', health: [{ name: 'p99', query: 'up', threshold: 1 }] },
    ],
  },
  'inline',
);

/** Values an attacker could put in a tag name or a workflow_dispatch input. */
const HOSTILE = [
  '$(id)',
  'v1.2.3$(id)',
  '`id`',
  'v1.2.3`whoami`',
  'v1.2.3;rm -rf /',
  'v1.2.3 && curl evil',
  'v1.2.3\n::set-output name=x::y',
  'v1.2.3\r\n',
  'v1.2.3\n',
  '../../etc/passwd',
  'v1.2.3/../../x',
  'v1.2.3|cat',
  "v1.2.3'",
  'v1.2.3"',
  '${{ secrets.GITHUB_TOKEN }}',
  'v1.2.3\u0000',
  'v'.padEnd(5000, '1'),
  '1'.repeat(300) + '.1.1',
  // Unicode look-alikes: fullwidth digits, Cyrillic "v", Arabic-Indic digits, NBSP, zero-width space.
  'v１.２.３',
  '\u0475' + '1.2.3',
  'v\u0661.2.3',
  'v1.2.3\u00a0',
  'v1.2\u200b.3',
  'v1.2.3-rc1 ',
  '-v1.2.3',
  '--help',
  '',
];

for (const value of HOSTILE) {
  test(`version label refuses ${JSON.stringify(value).slice(0, 40)}`, () => {
    assert.throws(
      () => validateVersionLabel(value, 'candidate'),
      (error: unknown) => {
        assert.ok(error instanceof InputError);
        assert.match(error.message, /^candidate: /);
        // The message quotes the value escaped: no raw newline can start a workflow command.
        assert.ok(!/[\r\n\u0000]/.test(error.message.split(';')[0] ?? ''), error.message);
        assert.ok(error.message.length < 400, 'a long value is cut in the message');
        return true;
      },
    );
  });
}

test('accepted version spellings', () => {
  for (const v of ['1.2.3', 'v1.2.3', 'v1.2.3-rc1', 'v1.2.3-rc.2', '1.99.0rc1', 'v10.12.0', 'v11.0.1-rc2']) assert.equal(validateVersionLabel(v, 'x'), v);
});

test("the gate's target.versionPattern applies on top of the strict pattern", () => {
  assert.equal(validateVersionLabel('v1.2.3-rc1', 'candidate', config.target.versionPattern), 'v1.2.3-rc1');
  assert.throws(() => validateVersionLabel('1.2.3', 'candidate', config.target.versionPattern), /does not match the gate's target.versionPattern/);
});

test('inputs from a workflow_dispatch are validated and defaulted from the config', () => {
  const inputs = validateGateInputs({ candidate: 'v1.3.0-rc1', baseline: '', tests: 'bounded', repeats: '', bench: '' }, config);
  assert.deepEqual(inputs, {
    mode: 'gate',
    candidate: 'v1.3.0-rc1',
    baseline: null,
    tests: ['bounded'],
    repeats: 3,
    bench: 'local',
    config: '.github/loadgate.yml',
    checkName: 'loadgate',
    rcPattern: 'v*-rc*',
    maxCost: null,
    runnerLimitMinutes: 360,
    runJobBudgetSec: 340 * 60,
    maxRepeats: null,
    continueFrom: null,
    earlierPairs: 0,
    newPairsAtMost: 3,
  });
});

test("continue-from: the earlier gate's run id, with a new max-repeats; the bench runs at most the pairs beyond every pair the earlier gate ran", () => {
  const continued = validateGateInputs(
    { candidate: 'v1.3.0-rc1', baseline: 'v1.2.0', repeats: '2', maxRepeats: '6', continueFrom: '12345678901', earlierPairs: '2' },
    config,
  );
  assert.equal(continued.continueFrom, '12345678901');
  assert.equal(continued.maxRepeats, 6);
  assert.equal(continued.newPairsAtMost, 4);
  // A second continuation reuses the first's pairs too, not only repeats: 6 ran, up to 12.
  const second = validateGateInputs({ candidate: 'v1.3.0-rc1', repeats: '2', maxRepeats: '12', continueFrom: '12345678902', earlierPairs: '6' }, config);
  assert.deepEqual([second.earlierPairs, second.newPairsAtMost], [6, 6]);
  const fresh = validateGateInputs({ candidate: 'v1.3.0-rc1', maxRepeats: '6' }, config);
  assert.deepEqual([fresh.continueFrom, fresh.maxRepeats, fresh.newPairsAtMost], [null, 6, 6]);
  const refused: [Record<string, string>, RegExp][] = [
    [{ continueFrom: '123' }, /^continue-from: give max-repeats too/],
    [{ continueFrom: '123', maxRepeats: '6' }, /^continue-from: how many pairs run 123 ran is unknown/],
    [
      { continueFrom: '123', maxRepeats: '6', earlierPairs: '6' },
      /^max-repeats: 6 is not above the 6 pairs run 123 already ran, so a continuation would add none; give at least 7/,
    ],
    [{ continueFrom: '12$(id)', maxRepeats: '6' }, /^continue-from: "12\$\(id\)" is not a workflow run id/],
    [{ continueFrom: 'https://github.com/o/r/actions/runs/1', maxRepeats: '6' }, /^continue-from: /],
    [{ maxRepeats: '21' }, /^max-repeats: /],
    [{ maxRepeats: '2;id' }, /^max-repeats: /],
    [{ maxRepeats: '2' }, /^max-repeats: 2 is below the 3 pairs every gate runs/],
  ];
  for (const [input, pattern] of refused) {
    assert.throws(() => validateGateInputs({ candidate: 'v1.3.0-rc1', ...input }, config), { message: pattern }, JSON.stringify(input));
  }
});

test('mode calibrate: the candidate on both sides for exactly repeats A/A pairs; the gate-only inputs are refused, naming each', () => {
  const calibration = validateGateInputs({ mode: 'calibrate', candidate: 'v1.2.0', repeats: '4', baseline: '', maxRepeats: '', continueFrom: '' }, config);
  assert.deepEqual(
    [calibration.mode, calibration.candidate, calibration.baseline, calibration.repeats, calibration.maxRepeats, calibration.newPairsAtMost],
    ['calibrate', 'v1.2.0', 'v1.2.0', 4, 4, 4],
  );
  assert.equal(validateGateInputs({ mode: '', candidate: 'v1.3.0-rc1' }, config).mode, 'gate');
  // A duet measures n − 1 degrees of freedom from n duets: fewer than 3 measure nothing.
  const duet = { ...config, mode: 'duet' as const };
  assert.throws(
    () => validateGateInputs({ mode: 'calibrate', candidate: 'v1.2.0', repeats: '2' }, duet),
    /^InputError: repeats: a calibration in duet mode .* needs at least 3 A\/A duets, got 2/,
  );
  assert.equal(validateGateInputs({ mode: 'calibrate', candidate: 'v1.2.0', repeats: '3' }, duet).repeats, 3);
  // A calibration continued: repeats is the depth it ends with; the earlier calibration's pairs are reused.
  const deeper = validateGateInputs({ mode: 'calibrate', candidate: 'v1.2.0', repeats: '8', continueFrom: '123', earlierPairs: '5' }, config);
  assert.deepEqual([deeper.repeats, deeper.earlierPairs, deeper.newPairsAtMost], [8, 5, 3]);
  const refused: [Record<string, string>, RegExp][] = [
    [{ mode: 'calibrate', repeats: '4' }, /^candidate: a calibration needs the version to run on both sides/],
    [{ mode: 'calibrate', candidate: 'v1.2.0' }, /^repeats: a calibration needs the number of A\/A pairs, 2 to 20 .*got none/],
    [{ mode: 'calibrate', candidate: 'v1.2.0', repeats: '1' }, /^repeats: a calibration needs the number of A\/A pairs.*got "1"/],
    [
      { mode: 'calibrate', candidate: 'v1.2.0', repeats: '4', baseline: 'v1.1.0' },
      /^baseline: not used by a calibration \(it runs the candidate on both sides\)/,
    ],
    [{ mode: 'calibrate', candidate: 'v1.2.0', repeats: '4', maxRepeats: '6' }, /^max-repeats: not used by a calibration/],
    [
      { mode: 'calibrate', candidate: 'v1.2.0', repeats: '4', continueFrom: '123', earlierPairs: '4' },
      /^repeats: 4 is not above the 4 pairs run 123 already ran/,
    ],
    [{ mode: 'calibrate;id', candidate: 'v1.2.0', repeats: '4' }, /^mode: "calibrate;id" is not a mode; use gate .* or calibrate/],
  ];
  for (const [input, pattern] of refused) {
    assert.throws(
      () => validateGateInputs(input, config),
      (e: Error) => e instanceof InputError && pattern.test(e.message),
      JSON.stringify(input),
    );
  }
});

test('max-cost: digits and one dot only, above 0', () => {
  assert.equal(validateGateInputs({ candidate: 'v1.3.0-rc1', maxCost: '80' }, config).maxCost, 80);
  assert.equal(validateGateInputs({ candidate: 'v1.3.0-rc1', maxCost: '79.50' }, config).maxCost, 79.5);
  for (const bad of ['0', '0.00', '-5', '1e3', '80$', '80;id', '$(id)', '1.234', '.5', '80.', '８０', ' 80', '1234567']) {
    assert.throws(() => validateGateInputs({ candidate: 'v1.3.0-rc1', maxCost: bad }, config), /^InputError: max-cost: /, bad);
  }
});

test('a pushed tag is the candidate when it matches the rc pattern', () => {
  const inputs = validateGateInputs({ eventName: 'push', refType: 'tag', refName: 'v2.0.0-rc3' }, config);
  assert.equal(inputs.candidate, 'v2.0.0-rc3');
  assert.deepEqual(inputs.tests, ['bounded', 'unbounded']);
  assert.throws(() => validateGateInputs({ eventName: 'push', refType: 'tag', refName: 'v2.0.0' }, config), /does not match the release-candidate pattern/);
  assert.throws(() => validateGateInputs({ eventName: 'push', refType: 'branch', refName: 'main' }, config), /no candidate version/);
});

test('hostile values in every other input are refused with the input named', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ tests: 'bounded;id' }, /^tests: /],
    [{ tests: 'bounded,$(id)' }, /^tests: /],
    [{ tests: 'bounded\nunbounded' }, /^tests: /],
    [{ tests: '../x' }, /^tests: /],
    [{ tests: 'nosuch' }, /^tests: "nosuch" is not a test in the gate config/],
    [{ tests: 'bounded,bounded' }, /listed twice/],
    [{ tests: Array.from({ length: 21 }, (_, i) => `t${i}`).join(',') }, /at most 20/],
    [{ repeats: '0' }, /^repeats: /],
    [{ repeats: '21' }, /^repeats: /],
    [{ repeats: '1e1' }, /^repeats: /],
    [{ repeats: '３' }, /^repeats: /],
    [{ repeats: '2;id' }, /^repeats: /],
    [{ bench: 'aws;id' }, /^bench: /],
    [{ bench: 'LOCAL' }, /^bench: /],
    [{ config: '../../etc/passwd.yml' }, /^config: /],
    [{ config: '/etc/gate.yml' }, /^config: /],
    [{ config: '.github/$(id).yml' }, /^config: /],
    [{ checkName: 'loadgate`id`' }, /^check-name: /],
    [{ checkName: 'x'.repeat(65) }, /^check-name: /],
    [{ rcPattern: 'v*-rc*;id' }, /^rc-pattern: /],
    [{ rcPattern: 'v*-rc*$(id)' }, /^rc-pattern: /],
    [{ rcPattern: 'v[0-9' }, /^rc-pattern: /],
    [{ rcPattern: '!v*-rc*' }, /^rc-pattern: /],
    [{ baseline: 'v1.3.0-rc1' }, /^baseline: equals the candidate/],
    [{ baseline: 'v1.2.0 ' }, /^baseline: /],
  ];
  for (const [input, pattern] of cases) {
    assert.throws(() => validateGateInputs({ candidate: 'v1.3.0-rc1', ...input }, config), { message: pattern }, JSON.stringify(input));
  }
});

test('a pushed tag is checked against GitHub filter patterns, negations included', () => {
  const push = (refName: string, rcPattern: string) => validateGateInputs({ eventName: 'push', refType: 'tag', refName, rcPattern }, config);
  assert.equal(push('v2.0.0-rc3', 'v[0-9]+.[0-9]+.[0-9]+-rc[0-9]+').candidate, 'v2.0.0-rc3');
  assert.throws(() => push('v2.0.0-rc3', 'v*-rc*,!v2.*'), /does not match the release-candidate pattern/);
  assert.equal(push('v3.0.0-rc1', 'v*-rc*,!v2.*').candidate, 'v3.0.0-rc1');
});
