import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AwsGateBench } from '../../src/bench/aws/aws-gate-bench.ts';
import { Progress } from '../../src/bench/progress.ts';
import { parseRunOptions } from '../../src/run/options.ts';
import { runResultSchema, type RunResult } from '../../src/results/schema.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { MATTERMOST_HEALTH_QUERIES } from '../../src/chat-servers/mattermost/defaults.ts';
import { PrometheusClient } from '../../src/metrics/prometheus.ts';
import { findK6, NO_K6 } from '../engine/k6/k6-binary.ts';
import { AGENT_IDS, APP_ID, GRAFANA_TOKEN, MACHINERY_TOLERANCES, readJson, runLoopbackGate, startLoopbackBench } from './aws/loopback-bench.ts';

/**
 * `loadgate run` on bench.kind aws, end to end on loopback (see aws/loopback-bench.ts):
 * the real gate loop, coordinator, k6 agents running the Mattermost scenario, agent
 * exporters, Prometheus and collection, against the Mattermost stand-in; the commands
 * the gate sends through its RemoteShell run for real under bash. One bounded and one
 * unbounded test per side, compared into a verdict and a report.
 */

const k6 = findK6();
const prometheus = existsSync('/usr/bin/prometheus') && existsSync('/usr/bin/prometheus-node-exporter');

/** The shipped 5xx health query, over the loopback bench's 5 s rate window. */
const SERVER_5XX = MATTERMOST_HEALTH_QUERIES.find((q) => q.name === 'HTTP 5xx server errors (%)')!.query.replaceAll('[1m]', '[5s]');

const CONFIG = `version: 1
name: aws-loopback
dataset: Stand-in dataset, 40 users
target:
  system: mattermost
  versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$'
  settings:
    ServiceSettings: { EnableLinkPreviews: true }
# The loopback "agents" share this machine's cores with everything else, so their node
# CPU is the machine's: the saturation limit is lifted here (unit tests cover it).
bench:
  kind: aws
  aws: { preset: L.110, agentCount: 2, usersPerAgent: 20, maxEngineCpuPercent: 100 }
# The actions whose routes the stand-in answers.
engine:
  kind: k6
  idle: { minimumMs: 200, averageMs: 600, rateMultiplier: 1 }
  actions: { SwitchChannel: 4, ScrollChannel: 2, CreatePost: 3, ViewThread: 1, AddReaction: 1, ViewGlobalThreads: 1, UnreadCheck: 1 }
tests:
  - type: bounded
    users: 6
    rampUp: 3s
    duration: 12s
  - type: unbounded
    maxUsers: 30
    usersIncrement: 2
    usersDecrement: 2
    restTime: 1s
    stabilityWindow: 8s
    equilibriumSlope: 25
    maxDuration: 28s
    health:
      - name: Average client request duration (s)
        query: sum(rate(loadtest_http_request_time_sum[5s]))/sum(rate(loadtest_http_request_time_count[5s]))
        threshold: 0.02
      - name: HTTP 5xx server errors (%)
        query: ${SERVER_5XX}
        threshold: 0.025
      - name: TCP retransmissions in the proxy node (%)
        query: (avg(rate(node_netstat_Tcp_RetransSegs{instance=~"proxy:9100"}[5s])) / avg(rate(node_netstat_Tcp_OutSegs{instance=~"proxy:9100"}[5s]))) * 100
        threshold: 1
# Seconds-long runs with a few users: this checks the machinery, not performance, so one
# pair and no sequential repeats (whether seconds of data decide is chance).
maxRepeats: 1
${MACHINERY_TOLERANCES}`;

test(
  'loadgate run drives an AWS bench: versions switched, load split over agents, Mattermost metrics collected, verdict and report',
  { skip: (!k6 && NO_K6) || (!prometheus && 'prometheus and prometheus-node-exporter (Debian packages) are not installed'), timeout: 240_000 },
  async () => {
    const bench = await startLoopbackBench(k6 as string);
    try {
      const { code, log, outDir } = await runLoopbackGate(bench, {
        config: CONFIG,
        baseline: 'v10.12.0',
        candidate: 'v11.0.1-rc2',
        args: ['--candidate-set', 'ServiceSettings.EnableLinkPreviews=false'],
      });

      // A verdict (any: two seconds-long runs decide nothing) and a report.
      assert.ok([0, 1, 2].includes(code), `exit code ${code}\n${log}`);
      const verdict = verdictFileSchema.parse(await readJson(join(outDir, 'verdict.json')));
      const report = await readFile(join(outDir, 'README.md'), 'utf8');
      assert.match(report, /v10\.12\.0/);
      assert.match(report, /v11\.0\.1-rc2/);

      const files = (await readdir(join(outDir, 'results'))).filter((f) => f.endsWith('.json')).sort();
      assert.equal(files.length, 4, files.join(', '));
      const results = await Promise.all(files.map(async (f) => runResultSchema.parse(await readJson(join(outDir, 'results', f)))));
      const of = (role: string, type: string): RunResult => {
        const r = results.find((x) => x.test.type === type && x.target.version === (role === 'baseline' ? 'v10.12.0' : 'v11.0.1-rc2'));
        assert.ok(r, `${role} ${type}`);
        return r;
      };
      for (const r of results) {
        assert.equal(r.status, 'completed', `${r.target.version} ${r.test.type}: ${r.problems.join('; ')}\n${log}`);
        assert.equal(r.target.system, 'mattermost');
        assert.equal(r.bench.kind, 'aws');
        // Mattermost's own metrics, per handler and per store method, from Prometheus.
        assert.ok(
          r.api.some((t) => t.name === 'createPost' && t.count > 0),
          JSON.stringify(r.api),
        );
        assert.ok(
          r.store.some((t) => t.name === 'PostStore.Save' && t.count > 0 && t.p99Ms > 0),
          JSON.stringify(r.store),
        );
        for (const key of [
          'apiAvgMs',
          'apiP99Ms',
          'storeAvgMs',
          'cpuPercent',
          'threads',
          'heapInUseBytes',
          'stackInUseBytes',
          'connectedUsers',
          'rps',
        ] as const) {
          assert.ok(r.series[key]?.v.length, `${r.target.version} ${r.test.type}: series ${key}`);
        }
        assert.ok(Math.max(...(r.series.connectedUsers?.v ?? [0])) >= 2, 'websockets held open by the scenario');
        assert.ok(r.totals.requests > 50, `client requests counted by the agents' exporters: ${r.totals.requests}`);
        // The generator's health came from the agents (node CPU; k6 dropped no iteration).
        assert.equal(typeof r.generator?.cpuPercentMax, 'number');
        assert.equal(r.generator?.droppedIterations, 0);
        // The Grafana snapshot of this run, with the stand-in's token from "Secrets Manager".
        assert.equal(r.links.length, 1, `${r.target.version} ${r.test.type}: ${JSON.stringify(r.links)}\n${log}`);
        assert.match(r.links[0]!.url, new RegExp(`^${bench.grafana.baseUrl}/dashboard/snapshot/`));
      }
      assert.match(of('baseline', 'bounded').bench.versions.target ?? '', /^Mattermost v10\.12\.0 \(10\.12\.0\./);
      assert.match(of('candidate', 'bounded').bench.versions.target ?? '', /^Mattermost v11\.0\.1-rc2 \(11\.0\.1\./);
      const unbounded = of('candidate', 'unbounded');
      assert.ok((unbounded.supportedUsers ?? 0) > 0, `supported users ${unbounded.supportedUsers}`);
      assert.deepEqual(unbounded.test.type === 'unbounded' && unbounded.test.health.map((h) => h.name), [
        'Average client request duration (s)',
        'HTTP 5xx server errors (%)',
      ]);
      assert.ok(
        verdict.checks.some((c) => c.metric === 'supportedUsers' || /supported/i.test(c.metric)),
        JSON.stringify(verdict.checks.map((c) => c.metric)),
      );

      // A healthy run: the stand-in answered no 5xx, so Prometheus has no 5xx series at all
      // (a labelled counter appears with its first increment), and the shipped query still
      // reads 0 %, not "no data" (which the coordinator would count towards a crashed run).
      assert.deepEqual(
        bench.mattermost.received.filter((r) => (r.status ?? 0) >= 500).map((r) => `${r.method} ${r.path} ${r.status}`),
        [],
      );
      const prometheus = new PrometheusClient(bench.prometheusUrl);
      assert.deepEqual(await prometheus.query('mattermost_api_time_count{status_code=~"5.."}'), []);
      const run = of('candidate', 'unbounded');
      const [series, ...more] = await prometheus.queryRange(SERVER_5XX, Date.parse(run.startedAt) / 1000, Date.parse(run.finishedAt) / 1000, 1);
      assert.ok(series && !more.length, `${SERVER_5XX} has a value during the candidate's unbounded run`);
      assert.ok(series.v.includes(0) && series.v.every((v) => v === 0 || Number.isNaN(v)), JSON.stringify(series.v));

      // The licence was asked on app0 through the shell; the bench's private entry point,
      // refused from the controller as a VPC address is from a GitHub runner, was never needed.
      await assert.rejects(fetch(`${bench.privateUrl}/api/v4/system/ping`), /fetch failed/);
      assert.ok(
        bench.mattermost.received.some((r) => r.path === '/api/v4/license/client' && r.query.includes('format')),
        'the licence was asked',
      );
      // The servers user data started ran on the dump's expired licence (the database's wins
      // over the file, and start-up removes an expired one): the gate asked only servers started
      // after a restore whose licence rows it had cleared, which loaded the bench's file.
      assert.equal(bench.mattermost.databaseLicence?.id, 'benchlicence00000000000000');
      // The bench's ExpiresAt followed the job: moved on every instance before the wait for the
      // nodes and before each run that needed more, only ever later.
      assert.ok(bench.expiryTags.length >= 2, JSON.stringify(bench.expiryTags));
      const firstReadiness = bench.calls.find((c) => c.cmd === 'cloud-init')?.atMs ?? 0;
      assert.ok((bench.expiryTags[0]?.atMs ?? Infinity) <= firstReadiness, 'extended before waiting for the nodes');
      for (const tag of bench.expiryTags) assert.deepEqual([...tag.resources].sort(), [APP_ID, ...AGENT_IDS, 'i-0cccccccccccccccc'].sort());
      const values = bench.expiryTags.map((t) => Date.parse(t.value));
      assert.deepEqual(
        values,
        [...values].sort((a, b) => a - b),
      );
      assert.equal(new Set(values).size, values.length, 'each change moves it later');

      // What the gate did on the nodes, through the shell: per run, stop → restore → install
      // (once per version switch) → configure (the candidate with its override) → start.
      const app = bench.calls.filter((c) => c.node === 'app0' && c.cmd !== 'cloud-init');
      assert.equal(app.filter((c) => c.cmd === 'loadgate-dataset').length, 4, 'the dataset is restored before every run');
      // Each restore is followed by the dump's licences being cleared.
      assert.deepEqual(
        app.filter((c) => c.cmd === 'loadgate-dataset' || c.cmd === 'psql').map((c) => c.cmd),
        ['loadgate-dataset', 'psql', 'loadgate-dataset', 'psql', 'loadgate-dataset', 'psql', 'loadgate-dataset', 'psql'],
      );
      assert.ok(app.filter((c) => c.cmd === 'psql').every((c) => c.stdin.includes("DELETE FROM Systems WHERE Name = 'ActiveLicenseId'")));
      const installs = app.filter((c) => c.args[0] === 'install').map((c) => c.args[1]);
      assert.deepEqual(installs, [
        'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz',
        'https://releases.mattermost.com/11.0.1-rc2/mattermost-11.0.1-rc2-linux-amd64.tar.gz',
        'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz',
        'https://releases.mattermost.com/11.0.1-rc2/mattermost-11.0.1-rc2-linux-amd64.tar.gz',
      ]);
      const patches = app.filter((c) => c.args[0] === 'configure').map((c) => JSON.parse(c.stdin) as unknown);
      assert.deepEqual(patches, [{}, { ServiceSettings: { EnableLinkPreviews: false } }, {}, { ServiceSettings: { EnableLinkPreviews: false } }]);
      // k6 ran on both agents with this run's environment, and the users file was uploaded once.
      const starts = bench.calls.filter((c) => c.cmd === 'loadgate-agent' && c.args[0] === 'start-k6');
      assert.deepEqual([...new Set(starts.map((c) => c.node))].sort(), ['agent0', 'agent1']);
      assert.ok(
        starts.every((c) => /^LOADGATE_MAX_USERS='(3|15)'$/m.test(c.stdin)),
        'each agent gets half of the users',
      );
      assert.ok(
        existsSync(join(bench.dir, 'nodes', 'agent0', 'users.txt')) && existsSync(join(bench.dir, 'nodes', 'agent1', 'scenarios', 'lib', 'metrics.js')),
      );
      assert.equal(bench.runningK6(), 0, 'the load is stopped after the gate');
      // The token was read from Secrets Manager once and never printed.
      assert.equal(bench.awsCalls.filter((c) => c.includes('get-secret-value')).length, 1);
      assert.ok(!log.includes(GRAFANA_TOKEN) && !report.includes(GRAFANA_TOKEN), 'no secret in the log or report');
      // The proxy query was skipped on a bench without a proxy, and the report says so.
      assert.match(report, /Health queries on the proxy were not evaluated/);
      assert.ok(!bench.calls.some((c) => c.node !== 'app0' && c.node.startsWith('app')), `only ${APP_ID} is an app node`);
    } finally {
      await bench.close();
    }
    assert.ok(!existsSync(bench.dir), 'the temp dir is removed');
  },
);

/**
 * The duet on the AWS bench: slot a and slot b on app0 (two stand-ins), agent0 loading
 * slot a and agent1 slot b, each slot's own Prometheus. Only supported users gate, with a
 * tolerance wide enough for seconds-long runs of a stand-in whose latency grows with its
 * own open websockets (8 or 9 users supported, so an A/A duet differs by up to one user,
 * about 12 %): an A/A duet must pass, a candidate five times slower per user (about a
 * fifth of the users, beyond the material change of 64 %) must fail.
 */
const DUET_CONFIG = `version: 1
name: aws-loopback-duet
mode: duet
target:
  system: mattermost
  versionPattern: '^v[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$'
bench:
  kind: aws
  aws: { preset: L.110, agentCount: 2, usersPerAgent: 20, maxEngineCpuPercent: 100 }
engine:
  kind: k6
  idle: { minimumMs: 200, averageMs: 600, rateMultiplier: 1 }
  actions: { SwitchChannel: 4, ScrollChannel: 2, CreatePost: 3, ViewThread: 1, AddReaction: 1, ViewGlobalThreads: 1, UnreadCheck: 1 }
tests:
  - type: unbounded
    maxUsers: 20
    usersIncrement: 1
    usersDecrement: 1
    restTime: 1s
    stabilityWindow: 8s
    # The stand-in's latency follows the users through a 5 s rate window, so a 1-user step
    # every second swings about ±25 % around the ceiling: the window is called flat at 60 %.
    # Both sides of a duet must each read flat once after the later one settled.
    equilibriumSlope: 60
    maxDuration: 40s
    health:
      - name: Average client request duration (s)
        query: sum(rate(loadtest_http_request_time_sum[5s]))/sum(rate(loadtest_http_request_time_count[5s]))
        threshold: 0.02
maxRepeats: 1
tolerances:
  supportedUsers: { tolerancePct: 40, noiseFloorPct: 20 }
  apiAvg: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  apiP99: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  storeAvg: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  storeP99: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  cpu: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  heap: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  stack: { tolerancePct: 100, noiseFloorPct: 100, gating: false }
  errorRate: { tolerancePct: 100, ignoreBelowPct: 100, gating: false }
  timeoutRate: { tolerancePct: 100, ignoreBelowPct: 100, gating: false }
`;

async function runDuetGate(baseline: string, candidate: string, latencyPerUserMs: Record<string, number> = {}) {
  const bench = await startLoopbackBench(k6 as string, 40, { duet: true, latencyPerUserMs });
  try {
    const { code, log, outDir } = await runLoopbackGate(bench, { config: DUET_CONFIG, baseline, candidate });
    const files = (await readdir(join(outDir, 'results'))).filter((f) => f.endsWith('.json')).sort();
    const results = await Promise.all(files.map(async (f) => runResultSchema.parse(await readJson(join(outDir, 'results', f)))));
    return {
      code,
      log,
      verdict: verdictFileSchema.parse(await readJson(join(outDir, 'verdict.json'))),
      report: await readFile(join(outDir, 'README.md'), 'utf8'),
      results,
      calls: [...bench.calls],
      runningK6: bench.runningK6(),
      privateUrls: bench.terraformOutputs.duet_slots?.value as Array<{ slot: string; proxy_url: string }>,
      snapshotDatasources: [...bench.grafana.queriedDatasources].sort(),
      dir: bench.dir,
    };
  } finally {
    await bench.close();
  }
}

const skipDuet = (!k6 && NO_K6) || (!prometheus && 'prometheus and prometheus-node-exporter (Debian packages) are not installed');

test(
  'an AWS duet of one version against itself passes: both slots at once, each its own service, database, agents and Prometheus',
  { skip: skipDuet, timeout: 240_000 },
  async (t) => {
    const gate = await runDuetGate('v10.12.0', 'v10.12.0');
    t.diagnostic(
      `A/A duet: ${gate.verdict.verdict}, supported users ${gate.results.map((r) => `slot ${r.duet?.slot} ${r.supportedUsers}`).join(', ')}; ${gate.verdict.summary}`,
    );
    assert.equal(gate.code, 0, `${gate.verdict.verdict}: ${gate.verdict.summary}\n${gate.log}`);
    assert.equal(gate.verdict.verdict, 'pass');
    assert.equal(gate.results.length, 2);
    const [first, second] = gate.results as [RunResult, RunResult];
    for (const r of gate.results) {
      assert.equal(r.status, 'completed', `${r.problems.join('; ')}\n${gate.log}`);
      assert.ok((r.supportedUsers ?? 0) > 0, `supported users ${r.supportedUsers}`);
      assert.ok(r.series.apiAvgMs?.v.length, "each slot's own Mattermost series");
      assert.equal(r.links.length, 1, `slot ${r.duet?.slot}'s Grafana snapshot: ${gate.log}`);
    }
    assert.deepEqual(gate.snapshotDatasources, ['prometheus', 'prometheus-b'], "each slot's snapshot read its own slot's Prometheus");
    assert.deepEqual(gate.results.map((r) => r.duet?.slot).sort(), ['a', 'b'], 'each side ran in its own slot');
    // The two runs were one duet: their tests ran over the same seconds.
    const overlap = Math.min(Date.parse(first.finishedAt), Date.parse(second.finishedAt)) - Math.max(Date.parse(first.startedAt), Date.parse(second.startedAt));
    assert.ok(overlap > 10_000, `the two runs overlapped by ${overlap} ms`);
    // Each slot's helpers were called with its slot, and each restored its own database.
    const app = gate.calls.filter((c) => c.node === 'app0' && c.cmd !== 'cloud-init');
    for (const slot of ['a', 'b']) {
      const own = app.filter((c) => c.args[0] === '--slot' && c.args[1] === slot);
      assert.deepEqual(
        [...new Set(own.map((c) => `${c.cmd} ${c.args[2]}`))].sort(),
        [
          'loadgate-dataset restore',
          'loadgate-mattermost configure',
          'loadgate-mattermost install',
          'loadgate-mattermost start',
          'loadgate-mattermost stop',
          'loadgate-mattermost version',
        ],
        `slot ${slot}`,
      );
    }
    assert.ok(
      app.filter((c) => c.cmd === 'psql').some((c) => c.args[0] === 'postgres://loopback/mattermost_b'),
      "slot b's restored database gets the post-restore SQL",
    );
    // Each agent group loaded its own slot's entry point.
    const starts = gate.calls.filter((c) => c.cmd === 'loadgate-agent' && c.args[0] === 'start-k6');
    const target = (node: string) => [...new Set(starts.filter((c) => c.node === node).map((c) => /^LOADGATE_BASE_URL='([^']*)'$/m.exec(c.stdin)?.[1]))];
    assert.deepEqual(target('agent0'), [gate.privateUrls[0]?.proxy_url]);
    assert.deepEqual(target('agent1'), [gate.privateUrls[1]?.proxy_url]);
    assert.equal(gate.runningK6, 0, 'the load is stopped after the gate');
    // The report says what the sides shared and that supported users are per side.
    assert.match(gate.report, /Duet: each baseline run ran at the same time as the candidate run/);
    assert.match(gate.report, /Supported users are per side/);
  },
);

test('an AWS duet fails a candidate whose service is five times slower per user', { skip: skipDuet, timeout: 240_000 }, async (t) => {
  const gate = await runDuetGate('v10.12.0', 'v11.0.1-rc2', { '11.0.1': 10 });
  t.diagnostic(
    `loss duet: ${gate.verdict.verdict}, supported users ${gate.results.map((r) => `${r.target.version} slot ${r.duet?.slot} ${r.supportedUsers}`).join(', ')}; ${gate.verdict.summary}`,
  );
  const of = (version: string) => gate.results.find((r) => r.target.version === version);
  const base = of('v10.12.0')?.supportedUsers ?? 0;
  const cand = of('v11.0.1-rc2')?.supportedUsers ?? 0;
  assert.equal(gate.code, 1, `${gate.verdict.verdict}: ${gate.verdict.summary} (supported users ${base} → ${cand})\n${gate.log}`);
  assert.equal(gate.verdict.verdict, 'fail');
  assert.ok(cand < base * 0.4, `supported users ${base} → ${cand}`);
  assert.deepEqual(
    gate.verdict.checks.filter((c) => c.verdict === 'fail').map((c) => c.metric),
    ['Supported users'],
    JSON.stringify(gate.verdict.checks.map((c) => [c.metric, c.verdict, c.deltaPct])),
  );
});

test('a duet config on a bench provisioned without duet slots is refused before anything runs, saying how to fix it', async () => {
  const { terraformOutputs } = await import('../aws/fixtures.ts');
  const { parseTerraformOutputs } = await import('../../src/aws/terraform-outputs.ts');
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const dir = await mkdtemp(join(tmpdir(), 'loadgate-duet-refused-'));
  try {
    const benchFile = join(dir, 'bench.json');
    await writeFile(benchFile, JSON.stringify(parseTerraformOutputs(terraformOutputs(), 'outputs.json')));
    await writeFile(join(dir, 'users.txt'), 'user1 pass-1\n');
    const o = await parseRunOptions([
      '--config',
      'examples/aws-mattermost.yml',
      '--baseline',
      'v10.12.0',
      '--candidate',
      'v11.0.1-rc2',
      '--out',
      join(dir, 'out'),
      '--bench-file',
      benchFile,
      '--users-file',
      join(dir, 'users.txt'),
    ]);
    const progress = new Progress(() => {}, { githubActions: false, intervalMs: 60_000 });
    const unused = {
      async run(): Promise<never> {
        throw new Error('nothing may run');
      },
    };
    assert.throws(
      () => new AwsGateBench(o, progress, join(dir, 'logs'), parseTerraformOutputs(terraformOutputs(), 'outputs.json'), { shell: unused, aws: unused }),
      /mode: duet: the bench lg-\S+ \(--bench-file .*bench\.json\) was provisioned without duet slots; provision it from this config \(bench variable duet = true\), or set mode: sequential/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
