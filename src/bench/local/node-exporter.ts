import type { ProcessSupervisor, ManagedProcess } from '../../util/process.ts';
import { runTool } from '../../util/run-tool.ts';
import { LOOPBACK, assertPortFree } from '../../util/ports.ts';
import { httpOk, waitUntilReady } from '../../util/readiness.ts';

/**
 * node_exporter on loopback with only the collectors the health queries and graphs use:
 * cpu (per-core busy time for the target cores), meminfo, netstat (TCP retransmissions)
 * and loadavg. Fewer collectors keep its own CPU use off the measurement.
 */
const NODE_EXPORTER_BINARIES = ['prometheus-node-exporter', 'node_exporter'];
const NODE_EXPORTER_COLLECTORS = ['cpu', 'meminfo', 'netstat', 'loadavg'];

export interface NodeExporter {
  readonly port: number;
  readonly process: ManagedProcess;
  version(): Promise<string>;
}

export function nodeExporterArgs(port: number): string[] {
  return [`--web.listen-address=${LOOPBACK}:${port}`, '--collector.disable-defaults', ...NODE_EXPORTER_COLLECTORS.map((c) => `--collector.${c}`)];
}

async function findBinary(): Promise<string> {
  for (const name of NODE_EXPORTER_BINARIES) {
    try {
      await runTool(name, ['--version'], { timeoutMs: 10_000 });
      return name;
    } catch {
      /* next */
    }
  }
  throw new Error('node_exporter: not installed (expected prometheus-node-exporter on PATH); run scripts/setup-local.sh');
}

export async function startNodeExporter(o: { supervisor: ProcessSupervisor; port: number; logFile: string; cpus?: string }): Promise<NodeExporter> {
  const binary = await findBinary();
  await assertPortFree('node_exporter', o.port);
  const proc = await o.supervisor.spawn({ name: 'node_exporter', command: binary, args: nodeExporterArgs(o.port), logFile: o.logFile, cpus: o.cpus });
  await waitUntilReady(() => httpOk(`http://${LOOPBACK}:${o.port}/metrics`, (s, body) => s === 200 && body.includes('node_cpu_seconds_total')), {
    component: 'node_exporter',
    process: proc,
    timeoutMs: 20_000,
    what: `serving node_cpu_seconds_total on ${LOOPBACK}:${o.port}/metrics`,
  });
  return {
    port: o.port,
    process: proc,
    async version() {
      const { stdout, stderr } = await runTool(binary, ['--version'], { timeoutMs: 10_000 });
      const m = /version (\S+)/.exec(stdout + stderr);
      return `node_exporter ${m?.[1] ?? 'unknown'}`;
    },
  };
}
