import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AwsGateBench, readBenchFile } from '../../src/bench/aws/aws-gate-bench.ts';
import { Progress } from '../../src/bench/progress.ts';
import { runGateOn } from '../../src/run/gate.ts';
import { parseRunOptions } from '../../src/run/options.ts';
import { runResultSchema, type RunResult } from '../../src/results/schema.ts';
import { verdictFileSchema } from '../../src/results/verdict-schema.ts';
import { MATTERMOST_HEALTH_QUERIES } from '../../src/target/mattermost/defaults.ts';
import { PrometheusClient } from '../../src/metrics/prometheus.ts';
import { findK6, NO_K6 } from '../engine/k6/k6-binary.ts';
import { APP_ID, GRAFANA_TOKEN, MACHINERY_TOLERANCES, readJson, startLoopbackBench } from './aws/loopback-bench.ts';

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

test('loadgate run drives an AWS bench: versions switched, load split over agents, Mattermost metrics collected, verdict and report', { skip: (!k6 && NO_K6) || (!prometheus && 'prometheus and prometheus-node-exporter (Debian packages) are not installed'), timeout: 240_000 }, async () => {
  const bench = await startLoopbackBench(k6 as string);
  try {
    const configFile = join(bench.dir, 'gate.yml');
    await writeFile(configFile, CONFIG);
    const outDir = join(bench.dir, 'report');
    const o = await parseRunOptions([
      '--config', configFile, '--baseline', 'v10.12.0', '--candidate', 'v11.0.1-rc2', '--out', outDir,
      '--bench-file', bench.benchFile, '--users-file', bench.usersFile,
      '--candidate-set', 'ServiceSettings.EnableLinkPreviews=false',
    ]);
    const lines: string[] = [];
    const io = { out: (l: string) => lines.push(l), err: (l: string) => lines.push(l) };
    const progress = new Progress(io.out, { githubActions: false, intervalMs: 60_000 });
    const gateBench = new AwsGateBench(o, progress, join(outDir, 'logs'), await readBenchFile(bench.benchFile), {
      shell: bench.shell,
      aws: bench.aws,
      endpoint: bench.endpoint,
      timing: { scrapeIntervalSec: 1, rateWindowSec: 5, firstStartTimeoutSec: 30, startTimeoutSec: 30, agentReadyTimeoutSec: 60, readinessTimeoutSec: 30, watchIntervalSec: 2 },
    });
    const code = await runGateOn(gateBench, o, io, progress);
    const log = lines.join('\n');

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
      assert.ok(r.api.some((t) => t.name === 'createPost' && t.count > 0), JSON.stringify(r.api));
      assert.ok(r.store.some((t) => t.name === 'PostStore.Save' && t.count > 0 && t.p99Ms > 0), JSON.stringify(r.store));
      for (const key of ['apiAvgMs', 'apiP99Ms', 'storeAvgMs', 'cpuPercent', 'threads', 'heapInUseBytes', 'stackInUseBytes', 'connectedUsers', 'rps'] as const) {
        assert.ok(r.series[key]?.v.length, `${r.target.version} ${r.test.type}: series ${key}`);
      }
      assert.ok(Math.max(...(r.series.connectedUsers?.v ?? [0])) >= 2, 'websockets held open by the scenario');
      assert.ok(r.totals.requests > 50, `client requests counted by the agents' exporters: ${r.totals.requests}`);
      // The generator's health came from the agents (node CPU; k6 dropped no iteration).
      assert.equal(typeof r.generator?.cpuPercentMax, 'number');
      assert.equal(r.generator?.droppedIterations, 0);
      // The Grafana snapshot of this run, with the stand-in's token from "Secrets Manager".
      assert.equal(r.links.length, 1, JSON.stringify(r.links));
      assert.match(r.links[0]!.url, new RegExp(`^${bench.grafana.baseUrl}/dashboard/snapshot/`));
    }
    assert.match(of('baseline', 'bounded').bench.versions.target ?? '', /^Mattermost v10\.12\.0 \(10\.12\.0\./);
    assert.match(of('candidate', 'bounded').bench.versions.target ?? '', /^Mattermost v11\.0\.1-rc2 \(11\.0\.1\./);
    const unbounded = of('candidate', 'unbounded');
    assert.ok((unbounded.supportedUsers ?? 0) > 0, `supported users ${unbounded.supportedUsers}`);
    assert.deepEqual(unbounded.test.type === 'unbounded' && unbounded.test.health.map((h) => h.name), ['Average client request duration (s)', 'HTTP 5xx server errors (%)']);
    assert.ok(verdict.checks.some((c) => c.metric === 'supportedUsers' || /supported/i.test(c.metric)), JSON.stringify(verdict.checks.map((c) => c.metric)));

    // A healthy run: the stand-in answered no 5xx, so Prometheus has no 5xx series at all
    // (a labelled counter appears with its first increment), and the shipped query still
    // reads 0 %, not "no data" (which the coordinator would count towards a crashed run).
    assert.deepEqual(bench.mattermost.received.filter((r) => (r.status ?? 0) >= 500).map((r) => `${r.method} ${r.path} ${r.status}`), []);
    const prometheus = new PrometheusClient(bench.prometheusUrl);
    assert.deepEqual(await prometheus.query('mattermost_api_time_count{status_code=~"5.."}'), []);
    const run = of('candidate', 'unbounded');
    const [series, ...more] = await prometheus.queryRange(SERVER_5XX, Date.parse(run.startedAt) / 1000, Date.parse(run.finishedAt) / 1000, 1);
    assert.ok(series && !more.length, `${SERVER_5XX} has a value during the candidate's unbounded run`);
    assert.ok(series.v.includes(0) && series.v.every((v) => v === 0 || Number.isNaN(v)), JSON.stringify(series.v));

    // The licence was asked on app0 through the shell; the bench's private entry point,
    // refused from the controller as a VPC address is from a GitHub runner, was never needed.
    await assert.rejects(fetch(`${bench.privateUrl}/api/v4/system/ping`), /fetch failed/);
    assert.ok(bench.mattermost.received.some((r) => r.path === '/api/v4/license/client' && r.query.includes('format')), 'the licence was asked');

    // What the gate did on the nodes, through the shell: per run, stop → restore → install
    // (once per version switch) → configure (the candidate with its override) → start.
    const app = bench.calls.filter((c) => c.node === 'app0' && c.cmd !== 'cloud-init');
    assert.equal(app.filter((c) => c.cmd === 'loadgate-dataset').length, 4, 'the dataset is restored before every run');
    // Each restore is followed by the dump's licences being cleared.
    assert.deepEqual(app.filter((c) => c.cmd === 'loadgate-dataset' || c.cmd === 'psql').map((c) => c.cmd), ['loadgate-dataset', 'psql', 'loadgate-dataset', 'psql', 'loadgate-dataset', 'psql', 'loadgate-dataset', 'psql']);
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
    assert.ok(starts.every((c) => /^LOADGATE_MAX_USERS='(3|15)'$/m.test(c.stdin)), 'each agent gets half of the users');
    assert.ok(existsSync(join(bench.dir, 'nodes', 'agent0', 'users.txt')) && existsSync(join(bench.dir, 'nodes', 'agent1', 'scenarios', 'lib', 'metrics.js')));
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
});
