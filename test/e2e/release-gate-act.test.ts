/**
 * End to end: `.github/workflows/release-gate.yml` itself, run by act in host mode
 * (`-P ubuntu-latest=-self-hosted`) with `bench: local` and a tiny profile, against the
 * GitHub API stand-in (GitHub's OpenAPI description, stateful). Asserts what the
 * repository looks like afterwards: the `loadgate` check run's final state on the
 * candidate's commit and the report PR's files. Real Synapse, PostgreSQL, nginx,
 * Prometheus, node_exporter and k6 run on 127.0.0.1 inside the workflow's gate job.
 * Then the publish CLI runs again over the same comparison and the same stand-in state
 * (a re-run of prepare's start and of the publish job, without the minutes of the gate):
 * the same check run and the same pull request are updated, nothing is duplicated.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GitHubStandin } from '../support/github-standin/server.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { runCli } from '../support/cli.ts';
import { runLogged } from '../support/logged-process.ts';
import { ROOT, gateEnvArgs, replacedActions, tagLocalRelease, withoutQueue, writeReleaseTree } from '../support/act.ts';

const ACT = [process.env.ACT_BIN, join(ROOT, '.cache', 'bin', 'act')].find((p) => p && existsSync(p));
const TOKEN = 'act-token-0123456789';
const RUN_ID = '4242';
const BASELINE = process.env.LOADGATE_E2E_BASELINE ?? '1.162.0';
const CANDIDATE = process.env.LOADGATE_E2E_CANDIDATE ?? '1.163.2';
const CONFIG = 'test/e2e/tiny-synapse.yml';
const TIMEOUT_MS = 25 * 60_000;

const skip =
  process.env.LOADGATE_SKIP_INTEGRATION === '1'
    ? 'LOADGATE_SKIP_INTEGRATION=1'
    : !ACT
      ? 'act is not installed (bash scripts/setup.sh --tests installs it)'
      : false;

/**
 * release-gate.yml and the reusable workflow it calls, as act can read them (see
 * test/support/act.ts); the copy of the caller calls the copy of the reusable workflow.
 */
function workflowsForAct(): string {
  const reusable = join(ROOT, '.github', 'workflows', 'loadgate.yml');
  const caller = readFileSync(join(ROOT, '.github', 'workflows', 'release-gate.yml'), 'utf8');
  assert.match(caller, /^    uses: \.\/\.github\/workflows\/loadgate\.yml$/m);
  writeFileSync(join(ROOT, 'tmp', 'loadgate.act.yml'), withoutQueue(readFileSync(reusable, 'utf8')));
  const file = join(ROOT, 'tmp', 'release-gate.act.yml');
  writeFileSync(file, withoutQueue(caller).replace('uses: ./.github/workflows/loadgate.yml', 'uses: ./tmp/loadgate.act.yml'));
  return file;
}

/**
 * This repository as GitHub holds it for the gate: its files (what git would commit from
 * this checkout) on a default branch, with the baseline and the candidate tagged, which the
 * reusable workflow checks out by ref (the checkout stand-in checks out exactly that).
 */
function taggedRepository(dir: string): string {
  writeReleaseTree(dir);
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, '-c', 'user.name=release-lead', '-c', 'user.email=release-lead@example.invalid', ...args], { stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('add', '.');
  git('commit', '-q', '-m', 'loadgate');
  return tagLocalRelease(dir, { baseline: BASELINE, candidate: CANDIDATE });
}

test(
  'release-gate.yml under act: local bench, tiny profile, check run and report PR; a re-run updates both',
  { skip, timeout: TIMEOUT_MS + 60_000 },
  async () => {
    const share = await mkdtemp(join(tmpdir(), 'loadgate-act-share-'));
    const repository = await mkdtemp(join(tmpdir(), 'loadgate-act-repo-'));
    const candidateSha = taggedRepository(repository);
    const standin = new GitHubStandin({
      tokens: { [TOKEN]: { permissions: { checks: 'write', contents: 'write', 'pull-requests': 'write' }, actions: true } },
    });
    standin.importGit(repository);
    await standin.start();
    const logFile = join(ROOT, 'tmp', `act-e2e.log`);
    await mkdir(join(ROOT, 'tmp'), { recursive: true });
    const workflow = workflowsForAct();
    try {
      const args = [
        'workflow_dispatch',
        '-W',
        workflow,
        '-P',
        'ubuntu-latest=-self-hosted',
        ...replacedActions([join(ROOT, '.github', 'workflows', 'release-gate.yml'), join(ROOT, '.github', 'workflows', 'loadgate.yml')]),
        '--input',
        `candidate=${CANDIDATE}`,
        '--input',
        `baseline=${BASELINE}`,
        '--input',
        'bench=local',
        '--var',
        `LOADGATE_CONFIG=${CONFIG}`,
        '--env',
        `GITHUB_RUN_ID=${RUN_ID}`,
        // The reusable workflow checks loadgate out into .loadgate: the files of this checkout;
        // the repository itself at the candidate's tag, from its tagged copy.
        ...gateEnvArgs({ standin, loadgate: { repository: `${standin.owner}/${standin.repo}`, source: ROOT }, workspace: repository, share, token: TOKEN }),
      ];
      const { code } = await runLogged(ACT as string, args, { cwd: ROOT, logFile, timeoutMs: TIMEOUT_MS });

      // GitHub's own schema accepted every request loadgate made.
      assert.deepEqual(standin.rejected, [], `requests rejected by GitHub's OpenAPI schema (act log: ${logFile})`);
      assert.deepEqual(standin.unmatched, [], `requests to routes outside the served operations (act log: ${logFile})`);

      // One report branch and one PR, carrying the whole report.
      const branch = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
      const files = standin.filesOnBranch(branch);
      const dir = `reports/${BASELINE}-vs-${CANDIDATE}`;
      assert.ok(files.size > 0, `no files on ${branch} (act exit ${code}, log: ${logFile})`);
      for (const required of ['README.md', 'verdict.json']) assert.ok(files.has(`${dir}/${required}`), `${dir}/${required} on ${branch}`);
      const graphs = [...files.keys()].filter((f) => f.startsWith(`${dir}/graphs/`) && f.endsWith('.png'));
      const results = [...files.keys()].filter((f) => f.startsWith(`${dir}/results/`) && f.endsWith('.json'));
      assert.ok(graphs.length >= 10, `graphs on the branch: ${graphs.length}`);
      assert.equal(results.length, 4, 'one run result per version and test');
      const png = files.get(graphs[0] as string) as Buffer;
      assert.deepEqual([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47], 'PNG survives the Git Data API round trip');
      const report = (files.get(`${dir}/README.md`) as Buffer).toString('utf8');
      assert.match(report, new RegExp(`^# Performance Comparison \`${BASELINE.replace(/\./g, '\\.')}\` vs \`${CANDIDATE.replace(/\./g, '\\.')}\``));
      const verdict = verdictFileSchema.parse(JSON.parse((files.get(`${dir}/verdict.json`) as Buffer).toString('utf8')));
      const pulls = standin.pulls.filter((p) => p.head === branch);
      assert.equal(pulls.length, 1, 'exactly one report PR');
      assert.match(pulls[0]?.body ?? '', new RegExp(verdict.verdict, 'i'));

      // The check run on the candidate's commit carries the verdict, never a passing
      // conclusion for a gate that did not pass; prepare created it, publish completed it.
      const runs = standin.checkRuns.filter((r) => r.name === 'loadgate' && r.head_sha === candidateSha);
      assert.equal(runs.length, 1, 'one loadgate check run on the candidate commit');
      const first = runs[0]!;
      assert.equal(first.status, 'completed');
      const expected = { pass: 'success', fail: 'failure', inconclusive: 'action_required' }[verdict.verdict];
      assert.equal(first.conclusion, expected, `verdict ${verdict.verdict}: ${verdict.summary}`);
      assert.ok(first.output.summary && Buffer.byteLength(first.output.summary) <= 65535);
      // The workflow exits non-zero exactly when the gate did not pass.
      assert.equal(code === 0, verdict.verdict === 'pass', `act exit code ${code} for verdict ${verdict.verdict}`);

      // A re-run over the same comparison: prepare's start, then the publish job (without
      // the check run id, so it must find the check run itself), against the same
      // repository state and the report the gate shared. GitHub re-runs a workflow run
      // under its own id and counts the attempt (GITHUB_RUN_ATTEMPT).
      const env = {
        GITHUB_TOKEN: TOKEN,
        GITHUB_REPOSITORY: `${standin.owner}/${standin.repo}`,
        GITHUB_API_URL: standin.url,
        GITHUB_SERVER_URL: 'https://github.com',
        GITHUB_RUN_ID: RUN_ID,
        GITHUB_RUN_ATTEMPT: '2',
        GITHUB_OUTPUT: undefined,
        GITHUB_STEP_SUMMARY: undefined,
        LOADGATE_GITHUB_WRITE_INTERVAL_MS: '0',
      };
      const writesBefore = first.writes;
      const headBefore = standin.branchHead(branch);
      const start = await runCli(
        ['publish', '--mode', 'start', '--baseline', BASELINE, '--candidate', CANDIDATE, '--sha', candidateSha, '--config', CONFIG],
        env,
      );
      assert.equal(start.code, 0, start.err);
      assert.match(start.out, new RegExp(`^check-run-id=${first.id}$`, 'm'), 'start takes over the same check run');
      const again = await runCli(
        ['publish', '--mode', 'finish', '--report', share, '--baseline', BASELINE, '--candidate', CANDIDATE, '--sha', candidateSha, '--config', CONFIG],
        env,
      );
      assert.equal(again.code, 0, again.err);
      const after = standin.checkRuns.filter((r) => r.name === 'loadgate' && r.head_sha === candidateSha);
      assert.equal(after.length, 1, 'still one check run');
      assert.equal(after[0]?.id, first.id);
      assert.ok((after[0]?.writes ?? 0) > writesBefore, 'the check run was written again');
      assert.equal(after[0]?.status, 'completed');
      assert.equal(after[0]?.conclusion, expected);
      assert.equal(standin.pulls.length, 1, 'still one pull request');
      assert.equal(standin.pulls[0]?.state, 'open');
      assert.match(again.err, /pull request #1 updated/);
      assert.equal(standin.branchHead(branch), headBefore, 'the same report adds no commit');
      assert.deepEqual(standin.rejected, []);
      assert.deepEqual(standin.unmatched, []);
    } finally {
      await standin.close();
      await rm(share, { recursive: true, force: true });
      await rm(repository, { recursive: true, force: true });
    }
  },
);
