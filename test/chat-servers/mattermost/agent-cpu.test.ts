import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { mattermostWindowQueries } from '../../../src/chat-servers/mattermost/queries.ts';
import { PrometheusClient } from '../../../src/metrics/prometheus.ts';
import { ProcessSupervisor } from '../../../src/util/process.ts';
import { allocatePort } from '../../../src/util/ports.ts';
import { httpOk, waitUntilReady } from '../../../src/util/readiness.ts';

/**
 * A duet slot's Prometheus (metrics.sh.tftpl) scrapes every node's node_exporter but only
 * its own slot's agents in the `loadtest` job. The agents' CPU limit must judge those agents
 * only: here slot b's Prometheus, whose agent1 idles while slot a's agent0 is saturated.
 */

const prometheusInstalled = existsSync('/usr/bin/prometheus');

/** node_exporter's idle-CPU counter (node_cpu_seconds_total, seconds) of a node `busy` of the time. */
function nodeExporter(busy: number): Server {
  const started = Date.now();
  return createServer((_req, res) => {
    const seconds = (Date.now() - started) / 1000;
    const body = [
      '# TYPE node_cpu_seconds_total counter',
      `node_cpu_seconds_total{cpu="0",mode="idle"} ${(1000 + seconds * (1 - busy)).toFixed(3)}`,
      `node_cpu_seconds_total{cpu="0",mode="user"} ${(1000 + seconds * busy).toFixed(3)}`,
    ];
    res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(`${body.join('\n')}\n`);
  });
}

const listen = async (server: Server): Promise<number> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

test(
  "the agents' CPU limit judges only the slot's own agents",
  { skip: !prometheusInstalled && 'prometheus (Debian package) is not installed', timeout: 90_000 },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), 'loadgate-agent-cpu-'));
    const supervisor = new ProcessSupervisor();
    const servers = [
      nodeExporter(0.97),
      nodeExporter(0.1),
      createServer((_req, res) => void res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end('# no samples\n')),
    ];
    try {
      const [agent0, agent1, exporter1] = await Promise.all(servers.map(listen));
      const target = (port: number | undefined, instance: string) => ({ targets: [`127.0.0.1:${port}`], labels: { instance } });
      const config = {
        global: { scrape_interval: '1s', scrape_timeout: '1s' },
        scrape_configs: [
          { job_name: 'node', static_configs: [target(agent0, 'agent0:9100'), target(agent1, 'agent1:9100')] },
          // Slot b's agent group: agent1 only.
          { job_name: 'loadtest', static_configs: [target(exporter1, 'agent1:6566')] },
        ],
      };
      await mkdir(join(dir, 'data'));
      await writeFile(join(dir, 'prometheus.yml'), stringify(config));
      const port = await allocatePort();
      const url = `http://127.0.0.1:${port}`;
      const prometheus = await supervisor.spawn({
        name: 'prometheus',
        command: 'prometheus',
        args: [
          `--config.file=${join(dir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(dir, 'data')}`,
          `--web.listen-address=127.0.0.1:${port}`,
          '--log.level=warn',
        ],
        logFile: join(dir, 'prometheus.log'),
      });
      await waitUntilReady(() => httpOk(`${url}/-/ready`), { component: 'prometheus', process: prometheus, timeoutMs: 60_000, what: 'ready' });
      const client = new PrometheusClient(url);
      const query = mattermostWindowQueries(10, '5s', 1).agentCpuMax;
      // Until the measurement window (10 s) and its rate window (5 s) are all scraped: a rate
      // over a window the series only began in is extrapolated low.
      for (let i = 0; i < 60; i++) {
        const scraped = await client.query('min(count_over_time(node_cpu_seconds_total{mode="idle"}[17s]))');
        if ((scraped[0]?.value ?? 0) >= 16) break;
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      const value = (await client.query(query))[0]?.value;
      assert.ok(value !== undefined, 'the query has a value');
      assert.ok(value > 5 && value < 20, `slot b's agent1 is about 10 % busy, got ${value}`);
      const everyAgent = await client.query(
        'max(100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{job="node",instance=~"agent.*",mode="idle"}[5s]))))',
      );
      assert.ok((everyAgent[0]?.value ?? 0) > 90, "slot a's agent0 is saturated: a limit over every agent would invalidate slot b's run");
    } finally {
      await supervisor.stopAll();
      supervisor.dispose();
      for (const server of servers) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      await rm(dir, { recursive: true, force: true });
    }
  },
);
