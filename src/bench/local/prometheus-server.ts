import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { ProcessSupervisor, ManagedProcess } from '../../util/process.ts';
import { runTool } from '../../util/run-tool.ts';
import { LOOPBACK, assertPortFree } from '../../util/ports.ts';
import { httpOk, waitUntilReady } from '../../util/readiness.ts';

/**
 * The bench's Prometheus: loopback only, storage in the bench dir, scraping every 5 s.
 * Job names are part of the health queries' contract: the chat server's name, e.g.
 * "synapse" (its metrics listener), "node" (node_exporter), "k6" (the engine's exporter),
 * "process" (loadgate's exporter of the target process). A target that is down between
 * runs (the server, k6) is simply an `up == 0` sample, not an error.
 */
export const SCRAPE_INTERVAL_SEC = 5;

export interface ScrapeTargets {
  /** The chat server's metrics listener: its job name (ChatServer.system), port and path. */
  server: { job: string; port: number; path: string };
  node: number;
  k6: number;
  process: number;
}

export function prometheusConfig(targets: ScrapeTargets): string {
  const job = (name: string, port: number, path = '/metrics') => ({
    job_name: name,
    metrics_path: path,
    static_configs: [{ targets: [`${LOOPBACK}:${port}`] }],
  });
  return stringify({
    global: { scrape_interval: `${SCRAPE_INTERVAL_SEC}s`, scrape_timeout: '4s', evaluation_interval: `${SCRAPE_INTERVAL_SEC}s` },
    scrape_configs: [
      job(targets.server.job, targets.server.port, targets.server.path),
      job('node', targets.node),
      job('k6', targets.k6),
      job('process', targets.process),
    ],
  });
}

export interface PrometheusServer {
  readonly port: number;
  readonly url: string;
  readonly process: ManagedProcess;
  version(): Promise<string>;
}

export async function startPrometheus(o: {
  supervisor: ProcessSupervisor;
  dir: string;
  logFile: string;
  port: number;
  targets: ScrapeTargets;
  cpus?: string;
}): Promise<PrometheusServer> {
  await mkdir(join(o.dir, 'data'), { recursive: true });
  const configFile = join(o.dir, 'prometheus.yml');
  await writeFile(configFile, prometheusConfig(o.targets));
  await assertPortFree('prometheus', o.port);
  const proc = await o.supervisor.spawn({
    name: 'prometheus',
    command: 'prometheus',
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(o.dir, 'data')}`,
      `--web.listen-address=${LOOPBACK}:${o.port}`,
      '--storage.tsdb.retention.time=2d',
      '--log.level=warn',
    ],
    logFile: o.logFile,
    cpus: o.cpus,
  });
  const url = `http://${LOOPBACK}:${o.port}`;
  await waitUntilReady(() => httpOk(`${url}/-/ready`), {
    component: 'prometheus',
    process: proc,
    timeoutMs: 60_000,
    what: `answering ${url}/-/ready`,
  });
  return {
    port: o.port,
    url,
    process: proc,
    async version() {
      const { stdout, stderr } = await runTool('prometheus', ['--version'], { timeoutMs: 10_000 });
      const m = /version (\S+)/.exec(stdout + stderr);
      return `Prometheus ${m?.[1] ?? 'unknown'}`;
    },
  };
}
