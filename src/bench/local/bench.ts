import { chmod, mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ManagedProcess, ProcessSupervisor } from '../../util/process.ts';
import { allocatePorts } from '../../util/ports.ts';
import { startPostgres, type PostgresServer } from './postgres.ts';
import { startNginx, type NginxServer } from './nginx.ts';
import { startPrometheus, type PrometheusServer } from './prometheus-server.ts';
import { startNodeExporter, type NodeExporter } from './node-exporter.ts';
import { startProcessExporter, type ProcessExporter } from './process-exporter.ts';
import { resolveRunAs } from './unprivileged.ts';

/**
 * The long-lived part of the local bench, started once per `loadgate run`: PostgreSQL,
 * nginx, node_exporter, Prometheus and the target-process exporter. The target (the chat
 * server) and the load engine (k6) start and stop per test run on the ports reserved here,
 * so nginx's upstream and Prometheus' scrape targets never change.
 *
 * CPU placement: the system under test (the server, PostgreSQL, nginx) on `targetCpus`, the
 * load engine and the monitoring (k6, Prometheus, node_exporter) on `engineCpus`, so the
 * generator cannot steal the target's CPU and the target-core CPU query measures the target.
 */
export interface BenchPorts {
  postgres: number;
  nginx: number;
  prometheus: number;
  nodeExporter: number;
  processExporter: number;
  /** The chat server's client API (nginx's upstream) and metrics listener. */
  serverClient: number;
  serverMetrics: number;
  k6Exporter: number;
  k6Api: number;
}

export interface LocalBench {
  readonly ports: BenchPorts;
  /** Data dirs of every component; removed at clean-up unless kept. */
  readonly dataRoot: string;
  readonly logDir: string;
  readonly targetCpus: string;
  readonly engineCpus: string;
  readonly postgres: PostgresServer;
  readonly nginx: NginxServer;
  readonly prometheus: PrometheusServer;
  readonly nodeExporter: NodeExporter;
  readonly processExporter: ProcessExporter;
  /** Component → version, for the bench fingerprint. */
  versions(): Promise<Record<string, string>>;
  /** The first long-lived component that died without being asked to, if any. */
  crashed(): ManagedProcess | undefined;
}

export interface LocalBenchOptions {
  supervisor: ProcessSupervisor;
  /** The chat server's metrics job (ChatServer.system) and the path its listener serves them on. */
  server: { job: string; metricsPath: string };
  logDir: string;
  targetCpus: string;
  engineCpus: string;
  /** Keep data dirs after the run (for debugging). */
  keep: boolean;
  /** Called as each component comes up, for progress output. */
  onStep?: (message: string) => void;
}

/**
 * Creates the data root: a temp dir (under TMPDIR) the unprivileged PostgreSQL user can
 * enter. Every folder above it must let others through (o+x), which a private TMPDIR
 * does not: that is reported up front instead of as an initdb permission error.
 */
async function createDataRoot(unprivileged: boolean): Promise<string> {
  if (unprivileged) {
    for (let dir = tmpdir(); ; dir = dirname(dir)) {
      const mode = (await stat(dir)).mode;
      if ((mode & 0o001) === 0) {
        throw new Error(
          `postgres: the bench data dirs go under TMPDIR (${tmpdir()}), but ${dir} cannot be entered by the unprivileged user PostgreSQL runs as; use a TMPDIR whose folders are o+x, such as /tmp`,
        );
      }
      if (dirname(dir) === dir) break;
    }
  }
  const root = await mkdtemp(join(tmpdir(), 'loadgate-bench-'));
  await chmod(root, 0o711);
  return root;
}

export async function startLocalBench(o: LocalBenchOptions): Promise<LocalBench> {
  const step = o.onStep ?? (() => {});
  await mkdir(o.logDir, { recursive: true });
  const dataRoot = await prepareDataRoot(o);
  const ports = await reservePorts();

  step(`postgres on 127.0.0.1:${ports.postgres}`);
  const postgres = await startPostgres({
    supervisor: o.supervisor,
    dataRoot: join(dataRoot, 'postgres'),
    logFile: join(o.logDir, 'postgres.log'),
    port: ports.postgres,
    cpus: o.targetCpus,
  });
  const { processExporter, nodeExporter, prometheus } = await startMonitoring(o, dataRoot, ports, step);
  step(`nginx on 127.0.0.1:${ports.nginx}`);
  const nginx = await startProxy(o, dataRoot, ports);

  for (const p of [postgres.process.pid, nginx.process.pid]) if (p !== undefined) processExporter.addGroup(p);

  return {
    ports,
    dataRoot,
    logDir: o.logDir,
    targetCpus: o.targetCpus,
    engineCpus: o.engineCpus,
    postgres,
    nginx,
    prometheus,
    nodeExporter,
    processExporter,
    crashed: () => [postgres.process, nginx.process, prometheus.process, nodeExporter.process].find((p) => p.crashed),
    async versions() {
      const settled = await Promise.allSettled([postgres.version(), nginx.version(), prometheus.version(), nodeExporter.version()]);
      const [db, proxy, prom, node] = settled.map((s) => (s.status === 'fulfilled' ? s.value : 'unknown'));
      return { database: db ?? 'unknown', proxy: proxy ?? 'unknown', metrics: prom ?? 'unknown', nodeExporter: node ?? 'unknown' };
    },
  };
}

/** The data root, watched by the supervisor and removed at clean-up unless kept. */
async function prepareDataRoot(o: LocalBenchOptions): Promise<string> {
  const dataRoot = await createDataRoot((await resolveRunAs()) !== null);
  if (!o.keep) o.supervisor.watchDir(dataRoot);
  o.supervisor.onCleanup('bench data dir', async () => {
    if (!o.keep) await rm(dataRoot, { recursive: true, force: true });
  });
  return dataRoot;
}

/** Every port of the bench, reserved at once so the long-lived and the per-run components never collide. */
async function reservePorts(): Promise<BenchPorts> {
  const [postgres, nginx, prometheus, nodeExporter, processExporter, serverClient, serverMetrics, k6Exporter, k6Api] = (await allocatePorts(9)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return { postgres, nginx, prometheus, nodeExporter, processExporter, serverClient, serverMetrics, k6Exporter, k6Api };
}

/** The target-process exporter, node_exporter and Prometheus, which scrapes them, the server and k6 on their reserved ports. */
async function startMonitoring(
  o: LocalBenchOptions,
  dataRoot: string,
  ports: BenchPorts,
  step: (message: string) => void,
): Promise<{ processExporter: ProcessExporter; nodeExporter: NodeExporter; prometheus: PrometheusServer }> {
  step(`process exporter on 127.0.0.1:${ports.processExporter}`);
  const processExporter = await startProcessExporter(ports.processExporter);
  o.supervisor.onCleanup('process exporter', () => processExporter.close());

  step(`node_exporter on 127.0.0.1:${ports.nodeExporter}`);
  const nodeExporter = await startNodeExporter({
    supervisor: o.supervisor,
    port: ports.nodeExporter,
    logFile: join(o.logDir, 'node_exporter.log'),
    cpus: o.engineCpus,
  });

  step(`prometheus on 127.0.0.1:${ports.prometheus}`);
  const prometheus = await startPrometheus({
    supervisor: o.supervisor,
    dir: join(dataRoot, 'prometheus'),
    logFile: join(o.logDir, 'prometheus.log'),
    port: ports.prometheus,
    cpus: o.engineCpus,
    targets: {
      server: { job: o.server.job, port: ports.serverMetrics, path: o.server.metricsPath },
      node: ports.nodeExporter,
      k6: ports.k6Exporter,
      process: ports.processExporter,
    },
  });
  return { processExporter, nodeExporter, prometheus };
}

/** nginx in front of the server's client port, its workers as the unprivileged user when there is one. */
async function startProxy(o: LocalBenchOptions, dataRoot: string, ports: BenchPorts): Promise<NginxServer> {
  const runAs = await resolveRunAs();
  return startNginx({
    supervisor: o.supervisor,
    dir: join(dataRoot, 'nginx'),
    logDir: o.logDir,
    logFile: join(o.logDir, 'nginx.log'),
    port: ports.nginx,
    upstreamPort: ports.serverClient,
    cpus: o.targetCpus,
    workerUser: runAs ? `${runAs.name} ${runAs.group}` : undefined,
  });
}
