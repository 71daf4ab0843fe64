/**
 * End to end, as a product repository adopts loadgate through the root action: a separate
 * consumer repository layout (its own git repository, its gate config at
 * .github/loadgate.yml, and examples/workflows/loadgate-action.yml copied unchanged to
 * .github/workflows/) runs under act in host mode, by workflow_dispatch, against the
 * GitHub API stand-in acting as the consumer's repository. The `uses: loadgate/loadgate@v1`
 * step is served from a release tree of this checkout (what a tag holds: no node_modules),
 * so the bundled CLI runs with no `npm ci`. Asserts the `loadgate` check run on the
 * candidate's commit and the report PR in the consumer's repository. Real Synapse,
 * PostgreSQL, nginx, Prometheus, node_exporter and k6 on 127.0.0.1 (the tiny profile of
 * test/e2e/tiny-synapse.yml).
 *
 * The other shipped caller, the reusable workflow, is adopted in
 * test/e2e/adopter-act.test.ts, which follows the README's steps.
 */
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { runLogged } from '../support/logged-process.ts';
import { ROOT, gateEnvArgs, replacedActions, startConsumerRepository, writeReleaseTree } from '../support/act.ts';

const ACT = [process.env.ACT_BIN, join(ROOT, '.cache', 'bin', 'act')].find((p) => p && existsSync(p));
const TOKEN = 'act-token-consumer-0123456789';
const BASELINE = process.env.LOADGATE_E2E_BASELINE ?? '1.162.0';
const CANDIDATE = process.env.LOADGATE_E2E_CANDIDATE ?? '1.163.2';
const TIMEOUT_MS = 25 * 60_000;

const skip =
  process.env.LOADGATE_SKIP_INTEGRATION === '1'
    ? 'LOADGATE_SKIP_INTEGRATION=1'
    : !ACT
      ? 'act is not installed (bash scripts/setup.sh --tests installs it)'
      : false;

/** What a caller pins: the reusable workflow (a job's uses) or the root action (a step's uses). */
type CallerShape = { jobs: { gate: { uses?: string; with?: Record<string, string>; steps?: { uses?: string; with?: Record<string, string> }[] } } };

function pinned(file: string): { repository: string; ref: string; config: string } {
  const { gate } = (parse(readFileSync(file, 'utf8')) as CallerShape).jobs;
  const step = gate.steps?.find((s) => /^[\w.-]+\/[\w.-]+@/.test(s.uses ?? '') && !/^actions\//.test(s.uses ?? ''));
  const uses = gate.uses ?? step?.uses ?? '';
  const [path, ref] = uses.split('@') as [string, string];
  const repository = path.split('/').slice(0, 2).join('/');
  const config = (gate.with ?? step?.with ?? {}).config ?? '';
  assert.ok(repository && ref && config, `${file} pins loadgate and names the config`);
  return { repository, ref, config };
}

async function adopt(t: TestContext, name: string): Promise<void> {
  const caller = join(ROOT, 'examples', 'workflows', name);
  const pin = pinned(caller);
  const { standin, candidateSha } = await startConsumerRepository(TOKEN, { baseline: BASELINE, candidate: CANDIDATE });
  const work = await mkdtemp(join(tmpdir(), 'loadgate-consumer-'));
  t.after(async () => {
    await standin.close();
    await rm(work, { recursive: true, force: true });
  });
  const consumer = join(work, 'chat-server');
  const release = writeReleaseTree(join(work, 'loadgate-release'));
  const share = join(work, 'share');
  const logFile = join(ROOT, 'tmp', `act-consumer-${name.replace(/\.yml$/, '')}.log`);
  mkdirSync(join(ROOT, 'tmp'), { recursive: true });
  {
    assert.ok(!existsSync(join(release, 'node_modules')), 'the release tree has no node_modules');
    // The consumer's repository: the caller exactly as shipped, and its own gate config.
    mkdirSync(join(consumer, '.github', 'workflows'), { recursive: true });
    copyFileSync(caller, join(consumer, '.github', 'workflows', name));
    copyFileSync(join(ROOT, 'test', 'e2e', 'tiny-synapse.yml'), join(consumer, pin.config));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: consumer, stdio: 'ignore' });
    git('init', '-q', '-b', 'main');
    git('add', '.');
    git('-c', 'user.name=consumer', '-c', 'user.email=consumer@example.invalid', 'commit', '-q', '-m', 'adopt loadgate');

    const args = [
      'workflow_dispatch',
      '-W',
      `.github/workflows/${name}`,
      '-P',
      'ubuntu-latest=-self-hosted',
      // act keeps its host jobs' directories and one shared tool_cache under this path
      // (nektos/act pkg/runner/run_context.go): this adoption takes its own, sharing no
      // files with another act.
      '--action-cache-path',
      join(work, 'act-cache'),
      '--local-repository',
      `${pin.repository}@${pin.ref}=${release}`,
      ...replacedActions([caller, join(release, '.github', 'workflows', 'loadgate.yml')]),
      '--input',
      `candidate=${CANDIDATE}`,
      '--input',
      `baseline=${BASELINE}`,
      ...gateEnvArgs({ standin, loadgate: { repository: pin.repository, source: release }, workspace: consumer, share, token: TOKEN }),
    ];
    const { code } = await runLogged(ACT as string, args, { cwd: consumer, logFile, timeoutMs: TIMEOUT_MS });

    assert.deepEqual(standin.rejected, [], `requests rejected by GitHub's OpenAPI schema (act log: ${logFile})`);
    assert.deepEqual(standin.unmatched, [], `requests to routes outside the served operations (act log: ${logFile})`);
    const log = readFileSync(logFile, 'utf8');
    assert.doesNotMatch(log, /npm (ci|install)/, 'no npm ci or npm install while the gate ran');

    const branch = `perf-report/${BASELINE}-vs-${CANDIDATE}`;
    const files = standin.filesOnBranch(branch);
    const dir = `reports/${BASELINE}-vs-${CANDIDATE}`;
    assert.ok(files.has(`${dir}/README.md`) && files.has(`${dir}/verdict.json`), `the report on ${branch} (act exit ${code}, log: ${logFile})`);
    const graphs = [...files.keys()].filter((f) => f.startsWith(`${dir}/graphs/`) && f.endsWith('.png'));
    assert.ok(graphs.length >= 10, `graphs drawn by the bundle's WebAssembly renderer: ${graphs.length}`);
    const verdict = verdictFileSchema.parse(JSON.parse((files.get(`${dir}/verdict.json`) as Buffer).toString('utf8')));
    const pulls = standin.pulls.filter((p) => p.head === branch);
    assert.equal(pulls.length, 1, 'one report PR in the consumer repository');

    const runs = standin.checkRuns.filter((r) => r.name === 'loadgate' && r.head_sha === candidateSha);
    assert.equal(runs.length, 1, 'one loadgate check run on the candidate commit');
    const expected = { pass: 'success', fail: 'failure', inconclusive: 'action_required' }[verdict.verdict];
    assert.equal(runs[0]?.status, 'completed');
    assert.equal(runs[0]?.conclusion, expected, `verdict ${verdict.verdict}: ${verdict.summary}`);
    assert.equal(code === 0, verdict.verdict === 'pass', `act exit code ${code} for verdict ${verdict.verdict}`);
  }
}

test('a consumer repository runs the root action from its release: check run and report PR, no npm ci', { skip, timeout: TIMEOUT_MS + 60_000 }, (t) =>
  adopt(t, 'loadgate-action.yml'),
);
