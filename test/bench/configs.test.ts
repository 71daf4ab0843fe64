import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { nginxConfig } from '../../src/bench/local/nginx.ts';
import { prometheusConfig, SCRAPE_INTERVAL_SEC } from '../../src/bench/local/prometheus-server.ts';
import { nodeExporterArgs } from '../../src/bench/local/node-exporter.ts';

test('nginx config: loopback listener, keepalive upstream to the target, foreground, every path in the bench dir', () => {
  const conf = nginxConfig({ dir: '/tmp/b/nginx', logDir: '/tmp/out/logs', port: 18080, upstreamPort: 18008, workerUser: 'loadgate loadgate' });
  assert.match(conf, /^\s*listen 127\.0\.0\.1:18080 reuseport;$/m);
  assert.match(conf, /upstream backend \{\s*server 127\.0\.0\.1:18008 max_fails=0;\s*keepalive 256;\s*\}/);
  assert.match(conf, /^daemon off;$/m);
  assert.match(conf, /^user loadgate loadgate;$/m);
  assert.match(conf, /proxy_http_version 1\.1;/);
  assert.match(conf, /proxy_set_header Connection "";/);
  // Only non-2xx/3xx responses are logged, as on the seeds' proxy.
  assert.match(conf, /access_log \/tmp\/out\/logs\/nginx-access\.log combined if=\$loggable;/);
  for (const path of conf.matchAll(/(?:pid|_temp_path|error_log)\s+(\S+);/g)) {
    assert.ok(path[1]!.startsWith('/tmp/b/nginx') || path[1]!.startsWith('/tmp/out/logs'), `${path[1]} is outside the bench dirs`);
  }
  // Nothing but loopback anywhere.
  assert.doesNotMatch(conf, /listen\s+(?!127\.0\.0\.1:)/);
  assert.doesNotMatch(nginxConfig({ dir: '/d', logDir: '/l', port: 1, upstreamPort: 2 }), /^user /m);
});

test('prometheus config: 5 s scrapes of the four bench jobs, all on loopback', () => {
  const config = parse(prometheusConfig({ server: { job: 'synapse', port: 1001, path: '/_synapse/metrics' }, node: 1002, k6: 1003, process: 1004 })) as {
    global: { scrape_interval: string };
    scrape_configs: { job_name: string; metrics_path: string; static_configs: { targets: string[] }[] }[];
  };
  assert.equal(config.global.scrape_interval, `${SCRAPE_INTERVAL_SEC}s`);
  assert.equal(SCRAPE_INTERVAL_SEC, 5);
  const jobs = Object.fromEntries(config.scrape_configs.map((j) => [j.job_name, j]));
  assert.deepEqual(Object.keys(jobs).sort(), ['k6', 'node', 'process', 'synapse']);
  assert.equal(jobs.synapse!.metrics_path, '/_synapse/metrics');
  assert.deepEqual(jobs.synapse!.static_configs[0]!.targets, ['127.0.0.1:1001']);
  assert.deepEqual(jobs.k6!.static_configs[0]!.targets, ['127.0.0.1:1003']);
});

test('node_exporter runs only the collectors the queries use, on loopback', () => {
  const args = nodeExporterArgs(9100);
  assert.deepEqual(args, [
    '--web.listen-address=127.0.0.1:9100',
    '--collector.disable-defaults',
    '--collector.cpu',
    '--collector.meminfo',
    '--collector.netstat',
    '--collector.loadavg',
  ]);
});
