import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { k6MetricsSchema, k6StatusSchema } from '../../../src/engine/k6/api.ts';
import { readClientMetrics } from '../../../src/engine/k6/client-metrics.ts';
import { formatPrometheus } from '../../../src/engine/k6/exporter.ts';
import { allocatePort } from '../../../src/util/ports.ts';

/**
 * The AWS agents cannot run loadgate's TypeScript exporter, so they run a Python port of
 * it (infra/aws/modules/bench/files/k6-exporter.py). Both must give Prometheus the same
 * text: here both read the same recorded k6 v1.4.2 REST answers and are compared line
 * by line, over several scrapes (series memory included).
 */
const EXPORTER = fileURLToPath(new URL('../../../infra/aws/modules/bench/files/k6-exporter.py', import.meta.url));
const fixture = (name: string): string => readFileSync(new URL(`../../fixtures/k6/${name}`, import.meta.url), 'utf8');

/** A k6 REST API stand-in serving recorded answers, swappable between scrapes. */
async function k6Stand(): Promise<{ server: Server; port: number; set: (status: string, metrics: string) => void }> {
  let answers = { status: fixture('k6-v1.4.2-status.json'), metrics: fixture('k6-v1.4.2-metrics.json') };
  const server = createServer((req, res) => {
    const body = req.url === '/v1/status' ? answers.status : req.url === '/v1/metrics' ? answers.metrics : undefined;
    if (!body) return void res.writeHead(404).end('{}');
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, set: (status, metrics) => (answers = { status, metrics }) };
}

async function scrape(url: string): Promise<{ status: number; text: string }> {
  for (let i = 0; i < 50; i++) {
    try {
      const res = await fetch(url);
      return { status: res.status, text: await res.text() };
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`the exporter at ${url} never answered`);
}

test('the agent exporter (Python) writes exactly what the local exporter (TypeScript) writes', { timeout: 30_000 }, async () => {
  const k6 = await k6Stand();
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-agent-exporter-'));
  const port = await allocatePort();
  let child: ChildProcess | undefined;
  try {
    // k6's pid file names this very process, so the CPU line is there too.
    writeFileSync(join(dir, 'k6.pid'), `${process.pid}\n`);
    child = spawn('python3', [EXPORTER, '--listen', `127.0.0.1:${port}`, '--k6', `127.0.0.1:${k6.port}`, '--pid-file', join(dir, 'k6.pid')], {
      stdio: 'ignore',
    });
    const memory = { bounds: new Set<number>(), codes: new Set(['500']), actions: new Set<string>() };
    const expected = (status: string, metrics: string): string => {
      const s = k6StatusSchema.parse(JSON.parse(status)).data.attributes;
      return formatPrometheus(
        readClientMetrics(
          new Map(k6MetricsSchema.parse(JSON.parse(metrics)).data.map((m) => [m.id, { type: m.attributes.type, sample: m.attributes.sample }])),
        ),
        { vus: s.vus ?? 0, vusMax: s['vus-max'] ?? 0 },
        1,
        memory,
      );
    };
    const withoutCpu = (text: string): string => text.replace(/^loadgate_engine_cpu_seconds_total \S+$/m, 'loadgate_engine_cpu_seconds_total <cpu>');

    const first = await scrape(`http://127.0.0.1:${port}/metrics`);
    assert.equal(first.status, 200);
    assert.equal(withoutCpu(first.text), withoutCpu(expected(fixture('k6-v1.4.2-status.json'), fixture('k6-v1.4.2-metrics.json'))));
    assert.match(first.text, /^loadgate_engine_cpu_seconds_total \d+(\.\d+)?$/m, 'the k6 process CPU from /proc');

    // A later scrape where k6 reports fewer series (a restart): nothing seen before disappears.
    const shrunk = JSON.stringify({
      data: JSON.parse(fixture('k6-v1.4.2-metrics.json')).data.filter(
        (m: { id: string }) => !m.id.startsWith('loadgate_action_') && m.id !== 'loadgate_req_le_0p05',
      ),
    });
    const status = fixture('k6-v1.4.2-status.json').replace('"vus": 3', '"vus": 0');
    k6.set(status, shrunk);
    const second = await scrape(`http://127.0.0.1:${port}/metrics`);
    assert.equal(withoutCpu(second.text), withoutCpu(expected(status, shrunk)));
    assert.match(second.text, /^loadgate_engine_actions_total\{action="Login"\} 0$/m);
    assert.match(second.text, /^loadtest_http_request_time_bucket\{le="0\.05"\} /m);

    // k6 gone between runs: 503, so Prometheus records up == 0 rather than stale numbers.
    k6.server.closeAllConnections();
    await new Promise<void>((resolve) => k6.server.close(() => resolve()));
    const down = await scrape(`http://127.0.0.1:${port}/metrics`);
    assert.equal(down.status, 503);
    assert.equal((await scrape(`http://127.0.0.1:${port}/other`)).status, 404);
  } finally {
    child?.kill('SIGKILL');
    if (k6.server.listening) k6.server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
