import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStandin, startStandin } from '../support/github-standin/server.ts';
import { TOKEN, check, verdictFile, writeReport } from './fixtures.ts';
import { runCli } from '../support/cli.ts';

const CONFIG = 'test/github/fixtures/gate.yml';
const BASELINE = 'v1.2.0';
const CANDIDATE = 'v1.3.0-rc1';

let scratch: string;
let warm: GitHubStandin;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'loadgate-cli-'));
  warm = await startStandin();
});
after(async () => {
  await warm.close();
  await rm(scratch, { recursive: true, force: true });
});

const CLEAN_INPUTS = {
  INPUT_CANDIDATE: undefined,
  INPUT_BASELINE: undefined,
  INPUT_TESTS: undefined,
  INPUT_REPEATS: undefined,
  INPUT_BENCH: undefined,
  INPUT_CONFIG: undefined,
  INPUT_CHECK_NAME: undefined,
  INPUT_RC_PATTERN: undefined,
  INPUT_MAX_COST: undefined,
  INPUT_RUNNER_LIMIT_MINUTES: undefined,
  INPUT_RUN_JOB_BUDGET: undefined,
  INPUT_MAX_REPEATS: undefined,
  INPUT_CONTINUE_FROM: undefined,
  INPUT_MODE: undefined,
  INPUT_CONFIG_AT_TAG: undefined,
  INPUT_EARLIER_REPORT: undefined,
  INPUT_REPORTS_REPOSITORY: undefined,
  INPUT_HAVE_REPORTS_TOKEN: undefined,
  INPUT_HAVE_APP: undefined,
  GITHUB_REPOSITORY: 'octo-org/chat-server',
  GITHUB_WORKFLOW_REF: undefined,
  GITHUB_EVENT_NAME: undefined,
  GITHUB_REF: undefined,
  // Under GitHub-hosted CI the runner's own event payload must not leak into these tests.
  GITHUB_EVENT_PATH: undefined,
};

test('check-inputs: env inputs validated and written to $GITHUB_OUTPUT', async () => {
  const output = join(scratch, 'out1');
  await writeFile(output, '');
  const r = await runCli(['check-inputs', '--github-output'], {
    ...CLEAN_INPUTS,
    INPUT_CONFIG: CONFIG,
    INPUT_TESTS: 'unbounded',
    GITHUB_EVENT_NAME: 'push',
    GITHUB_REF: `refs/tags/${CANDIDATE}`,
    GITHUB_OUTPUT: output,
  });
  assert.equal(r.code, 0, r.err);
  const written = await readFile(output, 'utf8');
  assert.equal(written, r.out + '\n');
  assert.match(written, /^candidate=v1\.3\.0-rc1$/m);
  assert.match(written, /^baseline=$/m);
  assert.match(written, /^needs-baseline=true$/m);
  assert.match(written, /^tests=unbounded$/m);
  assert.match(written, /^tests-json=\["unbounded"\]$/m);
  assert.match(written, /^repeats=2$/m);
});

test('check-inputs: a hostile input exits 3 and writes no output at all', async () => {
  const output = join(scratch, 'out2');
  await writeFile(output, '');
  const r = await runCli(['check-inputs', '--github-output'], {
    ...CLEAN_INPUTS,
    INPUT_CONFIG: CONFIG,
    INPUT_CANDIDATE: 'v1.3.0-rc1\nbaseline=v0.0.1',
    GITHUB_OUTPUT: output,
  });
  assert.equal(r.code, 3);
  assert.match(r.err, /candidate: "v1\.3\.0-rc1\\nbaseline=v0\.0\.1" is not a version label/);
  assert.equal(await readFile(output, 'utf8'), '');
});

test('check-inputs --json', async () => {
  const r = await runCli(['check-inputs', '--json', '--candidate', CANDIDATE, '--baseline', BASELINE, '--config', CONFIG, '--repeats', '1'], CLEAN_INPUTS);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(JSON.parse(r.out), {
    mode: 'gate',
    candidate: CANDIDATE,
    baseline: BASELINE,
    'needs-baseline': false,
    tests: 'bounded,unbounded',
    'tests-json': '["bounded","unbounded"]',
    repeats: 1,
    bench: 'local',
    'max-cost': '',
    config: CONFIG,
    'check-name': 'loadgate',
    'max-repeats': '',
    'continue-from': '',
    'earlier-pairs': '',
    'new-pairs-at-most': 3,
    'reports-owner': '',
    'reports-name': '',
    'reports-app-token': false,
    'config-problem': '',
  });
});

test('check-inputs with INPUT_MODE=calibrate: the candidate on both sides, repeats pairs and no more, and no baseline to pick', async () => {
  const env = { ...CLEAN_INPUTS, INPUT_MODE: 'calibrate', INPUT_CANDIDATE: 'v1.2.0', INPUT_REPEATS: '3', INPUT_CONFIG: CONFIG };
  const r = await runCli(['check-inputs', '--json'], env);
  assert.equal(r.code, 0, r.err);
  const out = JSON.parse(r.out);
  assert.deepEqual(
    [out.mode, out.candidate, out.baseline, out['needs-baseline'], out.repeats, out['max-repeats'], out['new-pairs-at-most']],
    ['calibrate', 'v1.2.0', 'v1.2.0', false, 3, 3, 3],
  );
  const bad = await runCli(['check-inputs', '--json'], { ...env, INPUT_BASELINE: 'v1.1.0' });
  assert.equal(bad.code, 3);
  assert.match(bad.err, /baseline: not used by a calibration/);
  // On AWS the pairs must fit in the run jobs, as a gate's; the input to lower is repeats.
  const aws = { ...CLEAN_INPUTS, INPUT_MODE: 'calibrate', INPUT_CANDIDATE: 'v10.11.0', INPUT_CONFIG: 'examples/aws-mattermost.yml' };
  assert.equal((await runCli(['check-inputs', '--json'], { ...aws, INPUT_REPEATS: '5' })).code, 0);
  const tooMany = await runCli(['check-inputs', '--json'], { ...aws, INPUT_REPEATS: '6' });
  assert.equal(tooMany.code, 3);
  assert.match(tooMany.err, /repeats \(the A\/A pairs of a calibration\): 6 pairs do not fit in the AWS workflow's 5 run jobs/);
});

/**
 * The configs a calibration is run for: a test shape changed under a measured model (the
 * shipped local duet model), and another preset under the assumed AWS model. Inside the
 * repository (the config input is a repository path); removed by the caller.
 */
async function staleModelConfigs(): Promise<{ dir: string; shapes: string; preset: string; users: string }> {
  await mkdir('tmp', { recursive: true });
  const dir = await mkdtemp(join('tmp', 'stale-model-'));
  const shapes = join(dir, 'shapes.yml');
  const local = await readFile('examples/local-synapse-duet.yml', 'utf8');
  const longer = local.replace(/^(\s+duration: )2m$/m, '$13m');
  assert.notEqual(longer, local);
  await writeFile(shapes, longer);
  const preset = join(dir, 'preset.yml');
  const aws = await readFile('examples/aws-mattermost.yml', 'utf8');
  const other = aws.replace(/^(\s+preset: )perfcomp$/m, '$1L.110');
  assert.notEqual(other, aws);
  await writeFile(preset, other);
  const users = join(dir, 'users.txt');
  await writeFile(users, 'user-1@chat-server.example pw-1\n');
  return { dir, shapes, preset, users };
}

test("check-inputs and the preflight in mode calibrate neither read nor check the config's noise model, which the calibration replaces", async (t) => {
  const c = await staleModelConfigs();
  t.after(() => rm(c.dir, { recursive: true, force: true }));
  const gate = { ...CLEAN_INPUTS, INPUT_CANDIDATE: '1.163.2', INPUT_BASELINE: '1.162.0' };
  const calibrate = { ...CLEAN_INPUTS, INPUT_MODE: 'calibrate', INPUT_CANDIDATE: '1.162.0', INPUT_REPEATS: '3' };
  // A gate is refused: the measured model is of other test shapes.
  const refused = await runCli(['check-inputs', '--json'], { ...gate, INPUT_CONFIG: c.shapes });
  assert.equal(refused.code, 3, refused.err);
  assert.match(refused.err, /noise model was measured with other test shapes \(test bounded differs from the model's\); recalibrate/);
  const calibrated = await runCli(['check-inputs', '--json'], { ...calibrate, INPUT_CONFIG: c.shapes });
  assert.equal(calibrated.code, 0, calibrated.err);
  assert.equal(JSON.parse(calibrated.out)['config-problem'], '');
  // The assumed AWS model after a preset change: refused for a gate, not for its calibration.
  const awsGate = await runCli(['check-inputs', '--json'], { ...gate, INPUT_CANDIDATE: 'v11.0.1-rc2', INPUT_BASELINE: 'v10.12.0', INPUT_CONFIG: c.preset });
  assert.equal(awsGate.code, 3, awsGate.err);
  assert.match(awsGate.err, /bench\.aws\.preset: the model's "perfcomp", the config's "L\.110"/);
  const awsCalibration = await runCli(['check-inputs', '--json'], { ...calibrate, INPUT_CANDIDATE: 'v10.11.0', INPUT_CONFIG: c.preset });
  assert.equal(awsCalibration.code, 0, awsCalibration.err);
  // The preflight checks settings only, in either mode.
  const preflight = await runCli(
    [
      'preflight',
      '--config',
      c.preset,
      '--bench',
      'aws',
      '--secrets',
      'aws-role-arn,license-secret-arn,admin-email,admin-password',
      '--variables',
      'LOADGATE_TF_STATE_BUCKET,LOADGATE_USERS_FILE',
      '--users-file',
      c.users,
    ],
    CLEAN_INPUTS,
  );
  assert.equal(preflight.code, 0, preflight.err);
  assert.match(preflight.err, /every secret and variable the aws bench needs/);
});

test("check-inputs of a continuation reads the earlier gate's report: every pair it ran is reused, for any number of continuations, and a wrong run stops the gate before the bench", async (t) => {
  const dir = await mkdtemp(join(scratch, 'earlier-'));
  const earlier = (pairs: number, verdict: 'inconclusive' | 'pass' = 'inconclusive', versions = { baseline: 'v10.12.0', candidate: 'v11.0.1-rc2' }) => {
    const v = verdictFile(verdict, [check()], versions);
    return writeFile(
      join(dir, 'verdict.json'),
      JSON.stringify({ ...v, problems: [], decision: { ...v.decision, pairs, maxRepeats: pairs, suggestedMorePairs: 6 } }),
    );
  };
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = {
    ...CLEAN_INPUTS,
    INPUT_CANDIDATE: 'v11.0.1-rc2',
    INPUT_CONFIG: 'examples/aws-mattermost.yml',
    INPUT_CONTINUE_FROM: '4242',
    INPUT_EARLIER_REPORT: dir,
  };
  const json = async (extra: Record<string, string>) => {
    const r = await runCli(['check-inputs', '--json'], { ...env, ...extra });
    return { ...r, out: r.out ? (JSON.parse(r.out) as Record<string, unknown>) : {} };
  };
  // A second continuation, after 6 pairs: its 5 new pairs fit the run jobs (6 would not).
  await earlier(6);
  const second = await json({ INPUT_MAX_REPEATS: '11' });
  assert.equal(second.code, 0, second.err);
  assert.deepEqual(
    [second.out['earlier-pairs'], second.out['new-pairs-at-most'], second.out.baseline, second.out['needs-baseline']],
    [6, 5, 'v10.12.0', false],
    'the earlier baseline, not a newly picked one',
  );
  const tooMany = await json({ INPUT_MAX_REPEATS: '12' });
  assert.equal(tooMany.code, 3);
  assert.match(
    tooMany.err,
    /max-repeats: 6 new pairs \(above the 6 a continuation reuses\) do not fit in the AWS workflow's 5 run jobs .*Lower max-repeats to 11 or less/,
  );
  // The first continuation, after 3 pairs (repeats is 1): the bench is planned for 3 new pairs, not 5.
  await earlier(3);
  assert.equal((await json({ INPUT_MAX_REPEATS: '6' })).out['new-pairs-at-most'], 3);
  // What cannot be continued is refused here, before the bench, and still completes the check run.
  const refusals: [() => Promise<void>, Record<string, string>, RegExp][] = [
    [() => earlier(3), { INPUT_MAX_REPEATS: '3' }, /max-repeats: 3 is not above the 3 pairs run 4242 already ran/],
    [() => earlier(3, 'pass'), { INPUT_MAX_REPEATS: '6' }, /continue-from: run 4242 ended pass: only an inconclusive gate goes on/],
    [
      () => earlier(3, 'inconclusive', { baseline: 'v10.11.0', candidate: 'v11.0.1-rc2' }),
      { INPUT_MAX_REPEATS: '6', INPUT_BASELINE: 'v10.12.0' },
      /continue-from: run 4242 compared v10\.11\.0 with v11\.0\.1-rc2, not v10\.12\.0 with v11\.0\.1-rc2/,
    ],
    [
      () => rm(join(dir, 'verdict.json')),
      { INPUT_MAX_REPEATS: '6' },
      /continue-from: run 4242 left no loadgate-report artifact with a readable verdict\.json \(ENOENT; artifacts are kept 30 days\)/,
    ],
  ];
  for (const [arrange, extra, pattern] of refusals) {
    await arrange();
    const r = await json(extra);
    assert.equal(r.code, 3, `${pattern}: ${r.err}`);
    assert.match(r.err, pattern);
    assert.match(String(r.out['config-problem']), pattern, 'the reason reaches the check run (publish --mode abort)');
    assert.equal(r.out.candidate, 'v11.0.1-rc2');
  }
});

test('check-inputs validates reports-repository before the bench: its form, that something can write there, and whether to mint the App token for it', async () => {
  const env = { ...CLEAN_INPUTS, INPUT_CANDIDATE: CANDIDATE, INPUT_BASELINE: BASELINE, INPUT_CONFIG: CONFIG };
  const run = async (extra: Record<string, string>) => {
    const r = await runCli(['check-inputs', '--json'], { ...env, ...extra });
    return { ...r, out: r.out ? (JSON.parse(r.out) as Record<string, unknown>) : {} };
  };
  const viaApp = await run({ INPUT_REPORTS_REPOSITORY: 'octo-org/perf-reports', INPUT_HAVE_APP: 'true' });
  assert.equal(viaApp.code, 0, viaApp.err);
  assert.deepEqual([viaApp.out['reports-owner'], viaApp.out['reports-name'], viaApp.out['reports-app-token']], ['octo-org', 'perf-reports', true]);
  // With the reports-token secret, the App's token is never minted for it.
  const viaToken = await run({ INPUT_REPORTS_REPOSITORY: 'octo-org/perf-reports', INPUT_HAVE_APP: 'true', INPUT_HAVE_REPORTS_TOKEN: 'true' });
  assert.equal(viaToken.out['reports-app-token'], false);
  const none = await run({ INPUT_REPORTS_REPOSITORY: 'octo-org/perf-reports' });
  assert.equal(none.code, 3);
  assert.match(
    none.err,
    /reports-repository: octo-org\/perf-reports is another repository than octo-org\/chat-server, and the workflow's own token reaches only that one; pass the reports-token secret/,
  );
  assert.match(String(none.out['config-problem']), /reports-repository: /, 'the check run says why');
  const malformed = await run({ INPUT_REPORTS_REPOSITORY: 'perf-reports', INPUT_HAVE_APP: 'true' });
  assert.equal(malformed.code, 3);
  assert.match(malformed.err, /reports-repository: "perf-reports" is not owner\/name of a GitHub repository/);
  // The calling repository itself needs nothing more; a calibration's pull request never goes there.
  assert.equal((await run({ INPUT_REPORTS_REPOSITORY: 'octo-org/chat-server' })).code, 0);
  const calibration = await run({
    INPUT_REPORTS_REPOSITORY: 'octo-org/perf-reports',
    INPUT_MODE: 'calibrate',
    INPUT_BASELINE: '',
    INPUT_CANDIDATE: BASELINE,
    INPUT_REPEATS: '3',
  });
  assert.equal(calibration.code, 0, calibration.err);
  assert.equal(calibration.out['reports-owner'], '');
});

test('check-inputs passes a validated max-cost and refuses anything else', async () => {
  const ok = await runCli(['check-inputs', '--json', '--candidate', CANDIDATE, '--config', CONFIG], { ...CLEAN_INPUTS, INPUT_MAX_COST: '79.50' });
  assert.equal(ok.code, 0, ok.err);
  assert.equal(JSON.parse(ok.out)['max-cost'], 79.5);
  const bad = await runCli(['check-inputs', '--json', '--candidate', CANDIDATE, '--config', CONFIG], { ...CLEAN_INPUTS, INPUT_MAX_COST: '80;id' });
  assert.equal(bad.code, 3);
  assert.match(bad.err, /max-cost: "80;id" is not an amount of US dollars/);
});

test('pick-baseline from a tags file, with the choice written for publish', async () => {
  const tags = join(scratch, 'tags.txt');
  const choiceFile = join(scratch, 'choice.json');
  await writeFile(tags, ['v1.0.0', 'v1.2.0', 'v1.2.1-rc1', 'v1.3.0-rc1', 'v1.3.0', 'junk'].join('\n'));
  const r = await runCli(['pick-baseline', '--candidate', CANDIDATE, '--tags-file', tags, '--write-choice', choiceFile, '--config', CONFIG]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^baseline=v1\.2\.0$/m);
  assert.match(r.err, /v1\.2\.0 is the newest stable release below v1\.3\.0-rc1/);
  assert.equal(JSON.parse(await readFile(choiceFile, 'utf8')).baseline, 'v1.2.0');
});

test('pick-baseline from the GitHub API (stand-in)', async (t) => {
  const s = await new GitHubStandin({ tags: ['v1.0.0', 'v1.1.0', 'v1.2.0-rc1', 'v2.0.0'], annotatedTags: ['v1.1.0'] }).start();
  t.after(() => s.close());
  const r = await runCli(['pick-baseline', '--candidate', 'v1.2.0-rc2', '--json'], {
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: `${s.owner}/${s.repo}`,
    GITHUB_API_URL: s.url,
  });
  assert.equal(r.code, 0, r.err);
  assert.equal(JSON.parse(r.out).baseline, 'v1.1.0');
  assert.deepEqual(s.rejected, []);
});

async function repoWithCandidate(): Promise<{ s: GitHubStandin; env: Record<string, string> }> {
  const s = await new GitHubStandin({ tags: [BASELINE] }).start();
  const sha = s.commitOnDefaultBranch('rc1');
  s.addTag(CANDIDATE, sha);
  return {
    s,
    env: {
      GITHUB_TOKEN: TOKEN,
      GITHUB_REPOSITORY: `${s.owner}/${s.repo}`,
      GITHUB_API_URL: s.url,
      GITHUB_SERVER_URL: 'https://github.com',
      GITHUB_RUN_ID: '77',
      LOADGATE_GITHUB_WRITE_INTERVAL_MS: '0',
    },
  };
}

test('publish start → finish through the CLI: outputs, job summary, exit code on a failing verdict', async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  const output = join(scratch, 'out3');
  const summary = join(scratch, 'summary.md');
  await writeFile(output, '');
  await writeFile(summary, '');
  const start = await runCli(
    ['publish', '--mode', 'start', '--baseline', BASELINE, '--candidate', CANDIDATE, '--config', CONFIG, '--tests', 'bounded', '--github-output'],
    {
      ...env,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
    },
  );
  assert.equal(start.code, 0, start.err);
  const id = /^check-run-id=(\d+)$/m.exec(start.out)?.[1];
  assert.ok(id, start.out);
  assert.match(await readFile(summary, 'utf8'), /\| bounded \| bounded \| 4 users for 20s/);
  assert.equal(s.checkRuns[0]?.details_url, 'https://github.com/octo-org/chat-server/actions/runs/77');

  const report = await writeReport(verdictFile('fail', [check({ verdict: 'fail', reason: 'p99 +35%' })]));
  t.after(() => report.cleanup());
  const finish = await runCli(
    [
      'publish',
      '--mode',
      'finish',
      '--report',
      report.dir,
      '--baseline',
      BASELINE,
      '--candidate',
      CANDIDATE,
      '--check-run-id',
      id,
      '--config',
      CONFIG,
      '--github-output',
      '--fail-on-verdict',
    ],
    {
      ...env,
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
    },
  );
  assert.equal(finish.code, 1, 'a failing gate fails the step');
  assert.match(finish.out, /^conclusion=failure$/m);
  assert.match(finish.out, /^pr-url=https:\/\/github\.com\/octo-org\/chat-server\/pull\/1$/m);
  assert.match(await readFile(output, 'utf8'), /^verdict=fail$/m);
  assert.match(await readFile(summary, 'utf8'), /loadgate: ❌ FAIL/);
  assert.equal(s.checkRuns.length, 1);
  assert.equal(s.checkRuns[0]?.conclusion, 'failure');
  assert.equal(s.checkRuns[0]?.annotations.length, 1);
  assert.ok(!(finish.out + finish.err).includes(TOKEN), 'the token is never printed');
  assert.deepEqual(s.rejected, []);
});

test('publish finish with no verdict exits 2 with --fail-on-verdict and leaves the check not passing', async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  const empty = await mkdtemp(join(scratch, 'empty-'));
  const r = await runCli(
    ['publish', '--report', empty, '--baseline', BASELINE, '--candidate', CANDIDATE, '--gate-result', 'cancelled', '--fail-on-verdict'],
    env,
  );
  assert.equal(r.code, 2);
  assert.equal(s.checkRuns[0]?.conclusion, 'action_required');
  assert.match(s.checkRuns[0]?.output.summary ?? '', /result "cancelled"/);
});

test('publish refuses hostile flags and a missing token with exit 3', async () => {
  const bad = await runCli(['publish', '--baseline', 'v1.2.0;id', '--candidate', CANDIDATE, '--report', '.'], {
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: 'octo-org/chat-server',
  });
  assert.equal(bad.code, 3);
  assert.match(bad.err, /baseline: "v1\.2\.0;id" is not a version label/);
  const noToken = await runCli(['publish', '--baseline', BASELINE, '--candidate', CANDIDATE, '--report', '.'], {
    GITHUB_TOKEN: undefined,
    GITHUB_REPOSITORY: 'octo-org/chat-server',
  });
  assert.equal(noToken.code, 3);
  assert.match(noToken.err, /env GITHUB_TOKEN/);
  const badSha = await runCli(['publish', '--baseline', BASELINE, '--candidate', CANDIDATE, '--sha', 'HEAD~1'], {
    GITHUB_TOKEN: TOKEN,
    GITHUB_REPOSITORY: 'octo-org/chat-server',
  });
  assert.equal(badSha.code, 3);
  assert.match(badSha.err, /--sha: expected a 40- or 64-character/);
});

test('publish finish with the PR refused: outputs and the check run are written, then the step fails (exit 3)', async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  s.allowActionsToCreatePullRequests = false;
  const output = join(scratch, 'out-refused');
  await writeFile(output, '');
  const report = await writeReport(verdictFile('pass'));
  t.after(() => report.cleanup());
  const r = await runCli(['publish', '--report', report.dir, '--baseline', BASELINE, '--candidate', CANDIDATE, '--github-output', '--fail-on-verdict'], {
    ...env,
    GITHUB_OUTPUT: output,
  });
  assert.equal(r.code, 3, 'a pass with an unpublished report still fails the step');
  assert.match(r.err, /Allow GitHub Actions to create and approve pull requests/);
  assert.match(await readFile(output, 'utf8'), /^conclusion=success$/m);
  assert.equal(s.checkRuns[0]?.status, 'completed');
  assert.equal(s.checkRuns[0]?.conclusion, 'success');
});

test('check-inputs: a config that cannot be read exits 3 naming it and the fix, after writing the other inputs for the check run', async () => {
  const output = join(scratch, 'out-typo');
  await writeFile(output, '');
  const r = await runCli(['check-inputs', '--json', '--github-output'], {
    ...CLEAN_INPUTS,
    INPUT_CONFIG: '.github/lodgate.yml',
    GITHUB_EVENT_NAME: 'push',
    GITHUB_REF: `refs/tags/${CANDIDATE}`,
    GITHUB_OUTPUT: output,
  });
  assert.equal(r.code, 3);
  // A pushed tag's run reads the config at the tagged commit: the message says so, and the release-branch fix.
  assert.match(r.err, /config: \.github\/lodgate\.yml does not exist at the commit of tag v1\.3\.0-rc1, where the gate reads it/);
  assert.match(
    r.err,
    /Add the caller workflow, \.github\/lodgate\.yml and its noise model to the branch v1\.3\.0-rc1 was cut from \(every release-X\.Y or ESR branch/,
  );
  const written = await readFile(output, 'utf8');
  assert.match(written, /^config-problem=config: \.github\/lodgate\.yml does not exist at the commit of tag v1\.3\.0-rc1/m);
  assert.match(written, /^candidate=v1\.3\.0-rc1$/m);
  assert.match(written, /^config=\.github\/lodgate\.yml$/m);
  assert.match(written, /^check-name=loadgate$/m);
  // A config whose noise model is refused is caught here too, before anything is provisioned.
  // The config input is a path inside the repository.
  await mkdir('tmp', { recursive: true });
  const dir = await mkdtemp(join('tmp', 'check-inputs-'));
  try {
    const config = join(dir, 'gate.yml');
    await writeFile(config, `${await readFile(CONFIG, 'utf8')}noiseModel: builtin:local-synapse\n`);
    const model = await runCli(['check-inputs', '--json', '--candidate', CANDIDATE, '--config', config], CLEAN_INPUTS);
    assert.equal(model.code, 3, model.err);
    assert.match(model.err, /noise model is for profile "synapse-local", the config is "cli-test"/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('publish --mode abort completes the check run of a gate that could not start, action_required, saying why', async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  const output = join(scratch, 'out-abort');
  await writeFile(output, '');
  const r = await runCli(['publish', '--mode', 'abort', '--candidate', CANDIDATE, '--config', '.github/lodgate.yml', '--github-output'], {
    ...env,
    GITHUB_OUTPUT: output,
  });
  assert.equal(r.code, 0, r.err);
  assert.match(await readFile(output, 'utf8'), /^conclusion=action_required$/m);
  assert.equal(s.checkRuns.length, 1);
  const run = s.checkRuns[0]!;
  assert.equal(run.name, 'loadgate');
  assert.equal(run.conclusion, 'action_required');
  assert.equal(run.output.title, 'No verdict: the gate could not start');
  assert.match(run.output.summary ?? '', /the gate could not start: config: \.github\/lodgate\.yml does not exist/);
  // A readable config: the reason given, else that the job failed before the check run.
  const other = await runCli(['publish', '--mode', 'abort', '--candidate', CANDIDATE, '--config', CONFIG], env);
  assert.equal(other.code, 0, other.err);
  assert.match(s.checkRuns.at(-1)?.output.summary ?? '', /the gate could not start: the job that validates the inputs and starts the check run failed/);
  assert.deepEqual(s.rejected, []);
});

test('publish --mode finish with --problem (the preflight refused the bench): the check run names what is missing, not the skipped job', async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  const start = await runCli(['publish', '--mode', 'start', '--baseline', BASELINE, '--candidate', CANDIDATE, '--config', CONFIG], env);
  assert.equal(start.code, 0, start.err);
  const empty = join(scratch, 'no-report');
  const problem =
    'the aws bench needs a setting that is not set, so nothing was provisioned: (1) the secret admin-email: load-test-ng logs the admin in; set the repository secret LOADGATE_ADMIN_EMAIL';
  const r = await runCli(
    [
      'publish',
      '--mode',
      'finish',
      '--report',
      empty,
      '--baseline',
      BASELINE,
      '--candidate',
      CANDIDATE,
      '--gate-result',
      'skipped',
      '--problem',
      problem,
      '--fail-on-verdict',
    ],
    env,
  );
  assert.equal(r.code, 2, r.err);
  const run = s.checkRuns.at(-1)!;
  assert.equal(run.conclusion, 'action_required');
  assert.equal(run.output.title, 'No verdict: the gate could not start');
  assert.match(run.output.summary ?? '', /the gate could not start: the aws bench needs a setting .* the secret admin-email/);
  assert.doesNotMatch(run.output.summary ?? '', /skipped/);
  assert.equal(s.checkRuns.length, 1, 'the started check run is completed, not another');
});

test('check-inputs: a dispatch that checked the candidate tag out names the tag when its commit lacks the config, and warns when it lacks the caller', async () => {
  const dispatch = {
    ...CLEAN_INPUTS,
    INPUT_CANDIDATE: CANDIDATE,
    INPUT_CONFIG: '.github/loadgate.yml',
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_REF: 'refs/heads/main',
  };
  const atTag = await runCli(['check-inputs', '--json'], {
    ...dispatch,
    INPUT_CONFIG_AT_TAG: 'true',
    GITHUB_WORKFLOW_REF: 'acme/chat/.github/workflows/loadgate-absent.yml@refs/heads/main',
  });
  assert.equal(atTag.code, 3);
  assert.match(
    atTag.err,
    /config: \.github\/loadgate\.yml does not exist at the commit of tag v1\.3\.0-rc1, where the gate reads it \(a tag's workflow runs from the tagged commit, and a workflow_dispatch for that tag reads the config there too\)/,
  );
  assert.match(
    atTag.err,
    /::warning::\.github\/workflows\/loadgate-absent\.yml does not exist at the candidate tag's commit: release-candidate tags pushed on that branch will not start a gate/,
  );
  // Not at a tag (the CLI on a branch): the message is about this commit.
  const here = await runCli(['check-inputs', '--json'], dispatch);
  assert.equal(here.code, 3);
  assert.match(here.err, /does not exist at the commit this workflow runs on/);
  // The caller present at the tag: no warning.
  const present = await runCli(['check-inputs', '--json', '--config', CONFIG], {
    ...dispatch,
    INPUT_CONFIG_AT_TAG: 'true',
    GITHUB_WORKFLOW_REF: 'acme/chat/.github/workflows/release-gate.yml@refs/heads/main',
  });
  assert.equal(present.code, 0, present.err);
  assert.doesNotMatch(present.err, /::warning::/);
});

test("publish --mode abort says check-inputs' own reason (--problem) over its own reading of the config", async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  const r = await runCli(
    [
      'publish',
      '--mode',
      'abort',
      '--candidate',
      CANDIDATE,
      '--config',
      '.github/lodgate.yml',
      '--problem',
      'config: .github/lodgate.yml does not exist at the commit of tag v1.3.0-rc1, where the gate reads it',
    ],
    env,
  );
  assert.equal(r.code, 0, r.err);
  assert.match(
    s.checkRuns.at(-1)?.output.summary ?? '',
    /the gate could not start: config: \.github\/lodgate\.yml does not exist at the commit of tag v1\.3\.0-rc1/,
  );
});

test('publish --mode start of a continued gate plans only the pairs beyond the ones the earlier gate ran, as provisioning does', async (t) => {
  const { s, env } = await repoWithCandidate();
  t.after(() => s.close());
  const { loadGateConfig } = await import('../../src/config/load.ts');
  const { buildPlan } = await import('../../src/aws/bench-plan.ts');
  const config = await loadGateConfig('examples/aws-mattermost.yml');
  const start = (extra: string[]) =>
    runCli(['publish', '--mode', 'start', '--baseline', BASELINE, '--candidate', CANDIDATE, '--config', 'examples/aws-mattermost.yml', ...extra], env);
  const cost = (pairs: number) => `$${buildPlan({ ...config, maxRepeats: pairs }, { dbSource: 'dump' }).cost.totalUsd.toFixed(2)}`;
  const continued = await start(['--max-repeats', '5', '--continue-from', '987', '--earlier-pairs', '3']);
  assert.equal(continued.code, 0, continued.err);
  // The earlier gate's 3 pairs reused: at most 2 new pairs on the new bench.
  assert.ok(s.checkRuns.at(-1)?.output.summary?.includes(`Worst-case cost: **${cost(2)}**`), s.checkRuns.at(-1)?.output.summary ?? undefined);
  const fresh = await start(['--max-repeats', '5']);
  assert.equal(fresh.code, 0, fresh.err);
  assert.ok(s.checkRuns.at(-1)?.output.summary?.includes(`Worst-case cost: **${cost(5)}**`));
});
