import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProcessSupervisor } from '../../src/util/process.ts';
import { allocatePorts } from '../../src/util/ports.ts';
import { startNodeExporter } from '../../src/bench/local/node-exporter.ts';
import { startProcessExporter } from '../../src/bench/local/process-exporter.ts';
import { startPrometheus, SCRAPE_INTERVAL_SEC } from '../../src/bench/local/prometheus-server.ts';
import { measureOutsideCpu } from '../../src/bench/local/outside-cpu.ts';
import { PrometheusClient } from '../../src/metrics/prometheus.ts';

/**
 * The outside share's queries against the bench's real monitoring: node_exporter, the
 * process exporter and Prometheus as the local bench starts them, scraping for a few
 * intervals. It checks that the share is measured from real series (job and label names,
 * enough samples in the window), not how busy this machine is: on a shared machine that
 * moves with other people's work, so no figure is asserted beyond its bounds.
 * Skipped only with LOADGATE_SKIP_INTEGRATION=1.
 */
const skip = process.env.LOADGATE_SKIP_INTEGRATION === '1' ? 'LOADGATE_SKIP_INTEGRATION=1' : false;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("the outside share is measured from the bench's own node_exporter, process exporter and Prometheus", { skip, timeout: 60_000 }, async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lg-outside-cpu-'));
  const supervisor = new ProcessSupervisor();
  try {
    const [node, processPort, prometheusPort, unused1, unused2] = (await allocatePorts(5)) as [number, number, number, number, number];
    const exporter = await startProcessExporter(processPort);
    supervisor.onCleanup('process exporter', () => exporter.close());
    await startNodeExporter({ supervisor, port: node, logFile: join(dir, 'node_exporter.log') });
    const prometheus = await startPrometheus({
      supervisor,
      dir: join(dir, 'prometheus'),
      logFile: join(dir, 'prometheus.log'),
      port: prometheusPort,
      targets: { server: { job: 'synapse', port: unused1, path: '/_synapse/metrics' }, node, k6: unused2, process: processPort },
    });
    // Three scrapes inside the window, so both increase() ranges hold at least two samples.
    const start = Date.now() / 1000;
    await sleep((3 * SCRAPE_INTERVAL_SEC + 2) * 1000);
    const end = Date.now() / 1000;
    const share = await measureOutsideCpu(new PrometheusClient(prometheus.url), { stableStart: start, stableEnd: end }, { target: '0', engine: '0' }, 25);
    assert.equal(share.unmeasured, undefined, share.unmeasured);
    assert.ok(share.percent !== undefined && share.percent >= 0 && share.percent <= 105, JSON.stringify(share));
    // Prometheus and node_exporter are this process's children: the bench's own CPU is not zero.
    assert.ok(share.benchPercent !== undefined && share.benchPercent > 0, JSON.stringify(share));
    assert.ok(share.hostPercent !== undefined && share.hostPercent > 0, JSON.stringify(share));
  } finally {
    await supervisor.stopAll();
    supervisor.dispose();
    await rm(dir, { recursive: true, force: true });
  }
});
