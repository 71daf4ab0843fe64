import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { MATTERMOST_HEALTH_QUERIES } from '../../src/chat-servers/mattermost/defaults.ts';
import { unboundedTestSchema } from '../../src/config/schema.ts';
import { runUnbounded } from '../../src/coordinator/unbounded.ts';
import { ProcessSupervisor } from '../../src/util/process.ts';
import { allocatePort } from '../../src/util/ports.ts';
import { httpOk, waitUntilReady } from '../../src/util/readiness.ts';
import { createHealthSource } from '../../src/metrics/health.ts';
import { NoDataError, PrometheusClient } from '../../src/metrics/prometheus.ts';
import { MattermostStandIn } from '../chat-servers/mattermost/mattermost-stand-in.ts';
import { FakeClock, FakeUsers } from '../coordinator/fakes.ts';

/**
 * The shipped Mattermost health queries against a real Prometheus scraping a healthy
 * target: a labelled counter has no series before its first increment, so a server that
 * served no 5xx and agents that saw no error or timeout export none of those series.
 */

const prometheusInstalled = existsSync('/usr/bin/prometheus');

/**
 * An agent's /metrics as load-test-ng's performance/metrics.go registers them: the
 * request-time histogram is a plain Histogram (present from the start), errors and
 * timeouts are CounterVecs (a series per label set, once incremented).
 */
class LoadTestNgMetrics {
  requests = 0;
  readonly errors = new Map<string, number>();
  render(): string {
    const lines = ['# TYPE loadtest_http_request_time histogram'];
    lines.push(
      `loadtest_http_request_time_bucket{le="0.05"} ${this.requests}`,
      `loadtest_http_request_time_bucket{le="+Inf"} ${this.requests}`,
      `loadtest_http_request_time_sum ${this.requests * 0.01}`,
      `loadtest_http_request_time_count ${this.requests}`,
    );
    lines.push('# TYPE loadtest_http_errors_total counter', '# TYPE loadtest_http_timeouts_total counter');
    for (const [code, n] of this.errors) lines.push(`loadtest_http_errors_total{path="/api/v4/posts",method="POST",status_code="${code}"} ${n}`);
    return `${lines.join('\n')}\n`;
  }
}

const REQUEST_QUERIES = MATTERMOST_HEALTH_QUERIES.filter((q) => /mattermost_api_time|loadtest_http/.test(q.query));
const FAILURE_QUERIES = REQUEST_QUERIES.filter((q) => /5xx|timeouts/i.test(q.name));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test(
  'the failure health queries read 0 on a healthy target, yet a target that served nothing still has no data',
  { skip: !prometheusInstalled && 'prometheus (Debian package) is not installed', timeout: 90_000 },
  async () => {
    assert.deepEqual(
      FAILURE_QUERIES.map((q) => q.name),
      ['HTTP 5xx server errors (%)', 'HTTP 5xx client errors (%)', 'Client timeouts (%)'],
    );
    const dir = await mkdtemp(join(tmpdir(), 'loadgate-absent-'));
    const supervisor = new ProcessSupervisor();
    const mattermost = new MattermostStandIn();
    const agent = new LoadTestNgMetrics();
    const agentServer = createServer((_req, res) => void res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(agent.render()));
    try {
      await mattermost.start();
      const metricsPort = await mattermost.startMetrics();
      await new Promise<void>((resolve) => agentServer.listen(0, '127.0.0.1', resolve));
      const agentPort = (agentServer.address() as AddressInfo).port;
      const prometheusPort = await allocatePort();
      const config = {
        global: { scrape_interval: '1s', scrape_timeout: '1s' },
        scrape_configs: [
          { job_name: 'mattermost', static_configs: [{ targets: [`127.0.0.1:${metricsPort}`], labels: { instance: 'app0:8067' } }] },
          { job_name: 'loadtest', static_configs: [{ targets: [`127.0.0.1:${agentPort}`], labels: { instance: 'agent0:4000' } }] },
        ],
      };
      await mkdir(join(dir, 'data'));
      await writeFile(join(dir, 'prometheus.yml'), stringify(config));
      const url = `http://127.0.0.1:${prometheusPort}`;
      const prometheus = await supervisor.spawn({
        name: 'prometheus',
        command: 'prometheus',
        args: [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${prometheusPort}`,
          '--log.level=warn',
        ],
        logFile: join(dir, 'prometheus.log'),
      });
      await waitUntilReady(() => httpOk(`${url}/-/ready`), { component: 'prometheus', process: prometheus, timeoutMs: 60_000, what: 'ready' });
      const client = new PrometheusClient(url);
      const health = createHealthSource(client, '');
      const value = async (promql: string): Promise<number | null | 'no data'> => {
        try {
          return await health.query(promql);
        } catch (error) {
          if (error instanceof NoDataError) return 'no data';
          throw error;
        }
      };
      const scraped = async (promql: string): Promise<void> => {
        for (let i = 0; i < 40 && !(await client.query(promql)).length; i++) await sleep(500);
      };

      // Scraped, but nothing served yet (a dead or idle target): no query gives a number.
      await scraped('up{job="loadtest"} == 1 and on() up{job="mattermost"} == 1');
      await sleep(2500);
      for (const q of REQUEST_QUERIES) {
        const v = await value(q.query);
        assert.ok(v === null || v === 'no data', `${q.name} before any request: ${v}`);
      }

      // A healthy minute: only 2xx answers, so Prometheus has no 5xx or timeout series at all.
      let failing = false;
      const traffic = setInterval(() => {
        agent.requests += 5;
        for (let i = 0; i < 5; i++) void fetch(`${mattermost.baseUrl}/api/v4/system/ping`).then((r) => r.arrayBuffer());
        if (!failing) return;
        // rate() needs the counter to grow between scrapes, not only to appear.
        agent.errors.set('500', (agent.errors.get('500') ?? 0) + 1);
        void fetch(`${mattermost.baseUrl}/api/v4/users/me`).then((r) => r.arrayBuffer());
      }, 200);
      try {
        await scraped('sum(rate(mattermost_api_time_count[1m])) > 0 and on() sum(rate(loadtest_http_request_time_count[1m])) > 0');
        assert.deepEqual(await client.query('mattermost_api_time_count{status_code=~"5.."}'), []);
        assert.deepEqual(await client.query('{__name__=~"loadtest_http_(errors|timeouts)_total"}'), []);
        for (const q of FAILURE_QUERIES) assert.equal(await value(q.query), 0, `${q.name} on a healthy target`);

        // The coordinator over these queries: a healthy target is not a run without data.
        const clock = new FakeClock();
        const users = new FakeUsers();
        const spec = unboundedTestSchema.parse({
          type: 'unbounded',
          maxUsers: 100,
          usersIncrement: 10,
          usersDecrement: 10,
          restTime: 1,
          stabilityWindow: 600,
          maxDuration: 8,
          health: REQUEST_QUERIES.map(({ name, query, threshold }) => ({ name, query, threshold: threshold * 1e6 })),
        });
        const result = await runUnbounded({ test: spec, users, health, clock, noDataLimit: 5 });
        assert.equal(result.stopCause, 'max-duration', result.reason);
        assert.ok(
          result.timeline.every((p) => FAILURE_QUERIES.every((q) => p.values[q.name] === 0)),
          JSON.stringify(result.timeline.at(-1)),
        );

        // A 5xx creates the series, and the query measures it.
        mattermost.failing.add('GET /users/me');
        failing = true;
        await scraped('sum(rate(mattermost_api_time_count{status_code=~"5.."}[1m])) > 0 and on() sum(rate(loadtest_http_errors_total[1m])) > 0');
        for (const q of FAILURE_QUERIES.slice(0, 2)) {
          const v = await value(q.query);
          assert.ok(typeof v === 'number' && v > 0, `${q.name} after 5xx answers: ${v}`);
        }
      } finally {
        clearInterval(traffic);
      }
    } finally {
      await supervisor.stopAll();
      supervisor.dispose();
      agentServer.closeAllConnections();
      await new Promise<void>((resolve) => agentServer.close(() => resolve()));
      await mattermost.stop();
      await mattermost.stopMetrics();
      await rm(dir, { recursive: true, force: true });
    }
  },
);
