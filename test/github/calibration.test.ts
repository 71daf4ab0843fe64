import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGateConfig } from '../../src/config/load.ts';
import { calibrationModelDestination } from '../../src/github/calibration.ts';
import { GitHubStandin } from '../support/github-standin/server.ts';
import { TOKEN } from './fixtures.ts';
import { runCli } from '../support/cli.ts';

const CONFIG = 'test/github/fixtures/gate.yml';

function configWith(noiseModel: string | undefined) {
  return parseGateConfig(
    {
      version: 1,
      name: 'synapse-local',
      target: { system: 'synapse' },
      bench: { kind: 'local' },
      ...(noiseModel ? { noiseModel } : {}),
      tests: [{ type: 'bounded', users: 40, rampUp: '30s', duration: '2m30s' }],
    },
    'inline',
  );
}

test("the measured model goes where the config's noiseModel reads it; a shipped or missing one sends it to .github/loadgate-noise.json, with the noiseModel: value to set", () => {
  assert.deepEqual(calibrationModelDestination(configWith('../noise/bench.json'), '.github/loadgate.yml'), { path: 'noise/bench.json' });
  assert.deepEqual(calibrationModelDestination(configWith('loadgate-noise.json'), '.github/loadgate.yml'), { path: '.github/loadgate-noise.json' });
  const builtin = calibrationModelDestination(configWith('builtin:aws-mattermost-duet'), '.github/loadgate.yml');
  assert.deepEqual([builtin.path, builtin.setNoiseModel], ['.github/loadgate-noise.json', 'loadgate-noise.json']);
  assert.match(builtin.reason ?? '', /builtin:aws-mattermost-duet, a model loadgate ships/);
  const none = calibrationModelDestination(configWith(undefined), 'perf/gate.yml');
  assert.deepEqual([none.path, none.setNoiseModel], ['.github/loadgate-noise.json', '../.github/loadgate-noise.json']);
  const outside = calibrationModelDestination(configWith('../../elsewhere.json'), '.github/loadgate.yml');
  assert.deepEqual([outside.path, outside.setNoiseModel], ['.github/loadgate-noise.json', 'loadgate-noise.json']);
  assert.match(outside.reason ?? '', /outside the repository/);
});

test('publish-calibration: plan writes the cost to the job summary; finish commits the model at its path and the report beside it, in one pull request, and posts no check run', async (t) => {
  const scratch = await mkdtemp(join(tmpdir(), 'loadgate-calibration-'));
  const s = await new GitHubStandin({ tags: ['v1.2.0'] }).start();
  t.after(async () => {
    await s.close();
    await rm(scratch, { recursive: true, force: true });
  });
  const summary = join(scratch, 'summary.md');
  const output = join(scratch, 'output');
  await writeFile(summary, '');
  await writeFile(output, '');
  const env = {
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: `${s.owner}/${s.repo}`,
    GITHUB_API_URL: s.url,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: '91',
    LOADGATE_GITHUB_WRITE_INTERVAL_MS: '0',
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_OUTPUT: output,
    GITHUB_EVENT_PATH: undefined,
  };
  const plan = await runCli(['publish-calibration', '--mode', 'plan', '--config', CONFIG, '--version', 'v1.2.0', '--repeats', '3'], env);
  assert.equal(plan.code, 0, plan.err);
  const planned = await readFile(summary, 'utf8');
  assert.match(planned, /## loadgate: calibrating/);
  assert.match(planned, /Version \*\*v1\.2\.0\*\* on both sides of 3 A\/A pairs on the \*\*local\*\* bench/);
  assert.match(planned, /\| bounded \| bounded \| 4 users for 20s/);

  // A calibration that measured nothing opens no pull request.
  const report = join(scratch, 'report');
  await mkdir(join(report, 'results'), { recursive: true });
  await writeFile(join(report, 'README.md'), '# calibration\n');
  const empty = await runCli(['publish-calibration', '--config', CONFIG, '--version', 'v1.2.0', '--repeats', '3', '--report', report], env);
  assert.equal(empty.code, 2, empty.err);
  assert.match(empty.err, /noise-model\.json does not exist: the calibration measured no model/);
  assert.equal(s.pulls.length, 0);

  const model = await readFile('noise/local-synapse.json');
  await writeFile(join(report, 'noise-model.json'), model);
  await writeFile(join(report, 'results', 'baseline-v1.2.0-bounded-1.json'), '{}\n');
  await writeFile(join(report, 'graph.png'), 'not committed');
  const finish = await runCli(['publish-calibration', '--config', CONFIG, '--version', 'v1.2.0', '--repeats', '3', '--report', report, '--github-output'], env);
  assert.equal(finish.code, 0, finish.err);
  assert.deepEqual(s.rejected, [], "every request matched GitHub's OpenAPI schema");
  assert.equal(s.checkRuns.length, 0, 'a calibration is not a verdict: no check run');
  assert.equal(s.pulls.length, 1);
  const pull = s.pulls[0]!;
  assert.equal(pull.title, 'loadgate: noise model calibrated with v1.2.0 (3 A/A pairs)');
  // The fixture config names no model: it goes to the default path, and the PR says how to use it.
  assert.match(pull.body ?? '', /set `noiseModel: \.\.\/\.\.\/\.\.\/\.github\/loadgate-noise\.json` in `test\/github\/fixtures\/gate\.yml`/);
  assert.match(pull.body ?? '', /\[workflow run\]\(https:\/\/github\.com\/octo-org\/chat-server\/actions\/runs\/91\)/);
  const files = s.filesOnBranch('loadgate-calibration/v1.2.0');
  assert.deepEqual(files.get('.github/loadgate-noise.json'), model, 'the model, byte for byte, where the config will read it');
  assert.ok(files.has('reports/calibration-v1.2.0/README.md'));
  assert.ok(files.has('reports/calibration-v1.2.0/results/baseline-v1.2.0-bounded-1.json'));
  assert.ok(!files.has('reports/calibration-v1.2.0/graph.png'), 'graphs stay in the artifact');
  assert.match(await readFile(output, 'utf8'), /^model-path=\.github\/loadgate-noise\.json$/m);
});

test("publish-calibration --mode plan on AWS: the worst-case cost against max-cost, and the pairs the runners' job limit allows", async () => {
  const plan = (args: string[]) =>
    runCli(['publish-calibration', '--mode', 'plan', '--config', 'examples/aws-mattermost.yml', '--version', 'v10.11.0', ...args], {
      GITHUB_STEP_SUMMARY: undefined,
    });
  const five = await plan(['--repeats', '5']);
  assert.equal(five.code, 0, five.err);
  assert.match(five.out, /^Worst-case cost: \*\*\$\d+\.\d\d\*\* \(no max-cost set\), up to /m);
  assert.match(five.out, /<summary>loadgate plan<\/summary>/);
  const capped = await plan(['--repeats', '5', '--max-cost', '50']);
  assert.match(capped.out, /\(max-cost \$50\.00: \*\*over it: provisioning refuses this calibration\*\*\)/);
  const seven = await plan(['--repeats', '7']);
  assert.equal(seven.code, 3);
  assert.match(seven.err, /repeats \(the A\/A pairs of a calibration\): 7 pairs do not fit in the AWS workflow's 5 run jobs/);
  assert.equal((await plan(['--repeats', '7', '--runner-limit-minutes', '720'])).code, 0, 'self-hosted runners with a longer limit hold more');
});

test('publish-calibration of a calibration dispatched on a release branch that stopped early: the pull request targets that branch, names the pairs measured and how to continue', async (t) => {
  const { verdictFile } = await import('./fixtures.ts');
  const scratch = await mkdtemp(join(tmpdir(), 'loadgate-calibration-'));
  const s = await new GitHubStandin({ tags: ['v1.2.0'] }).start();
  t.after(async () => {
    await s.close();
    await rm(scratch, { recursive: true, force: true });
  });
  const release = s.commitOnDefaultBranch('release branch config', { '.github/loadgate.yml': 'release-1.2\n' });
  s.refs.set('refs/heads/release-1.2', release);
  s.commitOnDefaultBranch('main moves on', { 'README.md': 'later\n' });
  const report = join(scratch, 'report');
  await mkdir(join(report, 'results'), { recursive: true });
  await writeFile(join(report, 'README.md'), '# calibration\n');
  await writeFile(join(report, 'noise-model.json'), await readFile('noise/local-synapse.json'));
  const v = verdictFile('inconclusive', [], { baseline: 'v1.2.0', candidate: 'v1.2.0' });
  await writeFile(join(report, 'verdict.json'), JSON.stringify({ ...v, problems: [], decision: { ...v.decision, pairs: 2, maxRepeats: 2 } }));
  const env = {
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: `${s.owner}/${s.repo}`,
    GITHUB_API_URL: s.url,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_RUN_ID: '92',
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_REF: 'refs/heads/release-1.2',
    GITHUB_WORKFLOW_REF: `${s.owner}/${s.repo}/.github/workflows/loadgate.yml@refs/heads/release-1.2`,
    LOADGATE_GITHUB_WRITE_INTERVAL_MS: '0',
    GITHUB_STEP_SUMMARY: undefined,
    GITHUB_OUTPUT: undefined,
    GITHUB_EVENT_PATH: undefined,
  };
  const finish = await runCli(['publish-calibration', '--config', CONFIG, '--version', 'v1.2.0', '--repeats', '3', '--report', report], env);
  assert.equal(finish.code, 0, finish.err);
  const pull = s.pulls[0]!;
  assert.equal(pull.base, 'release-1.2', 'the branch whose config was calibrated');
  assert.equal(pull.title, 'loadgate: noise model calibrated with v1.2.0 (2 A/A pairs)');
  assert.match(pull.body ?? '', /\*\*Stopped early\*\* after 2 of the 3 A\/A pairs asked/);
  assert.ok(
    (pull.body ?? '').includes(
      `gh workflow run loadgate.yml --repo ${s.owner}/${s.repo} -f mode=calibrate -f candidate=v1.2.0 -f repeats=3 -f continue-from=92`,
    ),
    pull.body ?? '',
  );
  // Branched from the release branch: the default branch's later commit is not in it.
  assert.equal(s.filesOnBranch('loadgate-calibration/v1.2.0').get('README.md')?.toString(), '# chat-server\n');
  assert.deepEqual(s.rejected, []);
});
