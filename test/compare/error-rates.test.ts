import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareRuns } from '../../src/compare/compare-runs.ts';
import { gateConfigSchema, tolerancesSchema } from '../../src/config/schema.ts';
import { errorRatesOf } from '../../src/compare/sequential.ts';
import { simulate } from '../../src/compare/simulate.ts';
import { loadGateConfig } from '../../src/config/load.ts';
import { loadNoiseModel } from '../../src/noise/model.ts';
import { bounded, unbounded } from '../support/runs.ts';
import { runCli } from '../support/cli.ts';

/** The error rates a team chooses (errorRates in the config): the bounds, the verdict record, and what they buy. */
const tol = tolerancesSchema.parse({});

test('the config states its error rates; 1 % and 1 % by default, each at most 20 %', () => {
  const base = {
    version: 1,
    name: 'g',
    target: { system: 'synapse' },
    bench: { kind: 'local' },
    tests: [{ type: 'bounded', users: 10, rampUp: 10, duration: 60 }],
  };
  assert.deepEqual(errorRatesOf(gateConfigSchema.parse(base)), { falseFail: 0.01, falsePass: 0.01 });
  assert.deepEqual(errorRatesOf(gateConfigSchema.parse({ ...base, errorRates: { falseFailPct: 5, falsePassPct: 2 } })), { falseFail: 0.05, falsePass: 0.02 });
  const refused = gateConfigSchema.safeParse({ ...base, errorRates: { falseFailPct: 30 } });
  assert.equal(refused.success, false);
  assert.deepEqual(refused.error?.issues[0]?.path, ['errorRates', 'falseFailPct']);
});

test('looser rates decide from less evidence: one pair a 1 %/1 % gate cannot settle passes at 5 %/5 %, and verdict.json records the rates', () => {
  const runs = (version: string, users: number[]) => users.flatMap((u, i) => [bounded(version, i), unbounded(version, u, i)]);
  const b = runs('1.0.0', [200]);
  const c = runs('1.1.0', [199]);
  const strict = compareRuns(b, c, tol, { minPairs: 1, maxPairs: 3 }).verdict;
  const loose = compareRuns(b, c, tol, { minPairs: 1, maxPairs: 3, errorRates: { falseFail: 0.05, falsePass: 0.05 } }).verdict;
  assert.equal(strict.verdict, 'inconclusive', strict.summary);
  assert.equal(loose.verdict, 'pass', loose.summary);
  assert.equal(strict.decision.alpha, 0.01);
  assert.equal(loose.decision.alpha, 0.05);
  assert.equal(loose.decision.beta, 0.05);
});

test('simulate at the shipped AWS rates: the stated bounds hold, and fewer unchanged releases end inconclusive than at 1 %/1 %', async () => {
  const config = await loadGateConfig('examples/aws-mattermost-sequential.yml');
  const model = await loadNoiseModel('noise/aws-mattermost.json', config);
  assert.deepEqual(config.errorRates, { falseFailPct: 5, falsePassPct: 5 });
  const none = (rates: { falseFailPct: number; falsePassPct: number }) =>
    simulate({ ...config, errorRates: rates }, model, { trials: 1000, seed: 1 }).find((r) => r.kind === 'none' && r.bench === 'model')!;
  const shipped = none(config.errorRates);
  const strict = none({ falseFailPct: 1, falsePassPct: 1 });
  assert.ok(shipped.fail <= 5, JSON.stringify(shipped));
  assert.ok(shipped.inconclusive < strict.inconclusive / 2, `${shipped.inconclusive} against ${strict.inconclusive}`);
  assert.ok(shipped.meanPairs < strict.meanPairs);
});

test("loadgate plan and simulate set the config's rates beside 1 %/1 %", async () => {
  const plan = await runCli(['plan', '--config', 'examples/aws-mattermost.yml']);
  assert.equal(plan.code, 0, plan.err);
  const text = plan.out;
  assert.match(text, /^ {2}5 % \/ 5 % +this config +\d\.\d\d pairs expected, \d+\.\d % inconclusive, \S+, \$\d+\.\d\d$/m);
  assert.match(text, /^ {2}1 % \/ 1 % +the default +\d\.\d\d pairs expected, \d+\.\d % inconclusive, \S+, \$\d+\.\d\d$/m);
  const sim = await runCli(['simulate', '--config', 'examples/aws-mattermost.yml', '--trials', '200']);
  assert.equal(sim.code, 0, sim.err);
  assert.match(sim.out, /Pass \/ fail \/ inconclusive at 5 % \/ 5 % \(this config\) and at 1 % \/ 1 %:\n {2}no change: .* against /);
});
