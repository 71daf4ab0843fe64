import { createHash } from 'node:crypto';
import { runOnNodes, type BenchNode, type RemoteShell } from './remote-shell.ts';
import { SSM_STDOUT_LIMIT } from './ssm-shell.ts';
import { aggregateGoCpuProfile, type GoCpuProfile } from '../../chat-servers/mattermost/pprof.ts';

/**
 * A CPU profile of one slot's Mattermost on an app node, fetched over the remote shell.
 *
 * Mattermost serves Go's net/http/pprof handlers on its metrics listener, beside
 * /metrics, whenever MetricsSettings.Enable is on (server/channels/app/platform/metrics.go
 * initMetricsRouter; ListenAddress, the bench's :8067, slot b :8167). It is the listener
 * load-test-ng's Pyroscope scrapes: with PyroscopeSettings.EnableAppProfiling, Alloy's
 * pyroscope.scrape gets the app nodes' metrics targets (app-0:8067) with
 * profile.process_cpu on, whose path is /debug/pprof/profile (deployment/terraform/
 * pyroscope.go NewAlloyConfig, metrics.go). The handler refuses a duration above the
 * listener's WriteTimeout (ServiceSettings.WriteTimeout, 300 s by default).
 *
 * The listener is private to the VPC, so the node fetches the profile itself into a file,
 * then hands it back in base64 parts as large as SSM returns: GetCommandInvocation gives
 * the first 24,000 characters of a command's stdout (ssm-shell.ts), 18,000 bytes in base64.
 * Reading it whole would need an S3 bucket for the command output, which the bench's
 * instance roles cannot write.
 */
export const PROFILE_CHUNK_BYTES = (SSM_STDOUT_LIMIT / 4) * 3;

const HEADER = 'set -euo pipefail\nhome="${LOADGATE_HOME:-/var/lib/loadgate}"\n';

function checkName(name: string): string {
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name) || name.includes('..')) throw new Error(`not a safe profile name: ${JSON.stringify(name)}`);
  return name;
}

function checkPort(port: number): number {
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`not a port: ${port}`);
  return port;
}

/** Samples the CPU for `seconds` into `<home>/profiles/<name>.pb.gz`; prints its size and SHA-256. */
export function captureProfileScript(name: string, seconds: number, metricsPort: number): string {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 290) throw new Error(`profile seconds must be 1-290 (below Mattermost's 300 s WriteTimeout): ${seconds}`);
  const file = `"$home/profiles/${checkName(name)}.pb.gz"`;
  // LOADGATE_METRICS_URL_<port> relocates the listener for tests, as the licence check's variable does.
  const base = `\${LOADGATE_METRICS_URL_${checkPort(metricsPort)}:-http://127.0.0.1:${metricsPort}}`;
  return (
    HEADER +
    'mkdir -p "$home/profiles"\n' +
    `curl -fsS --max-time ${seconds + 60} -o ${file}.part "${base}/debug/pprof/profile?seconds=${seconds}"\n` +
    `mv ${file}.part ${file}\n` +
    `printf '%s %s\\n' "$(stat -c %s ${file})" "$(sha256sum ${file} | cut -d' ' -f1)"\n`
  );
}

/** Prints `length` bytes of the profile from `offset`, base64 on one line. */
export function readProfileChunkScript(name: string, offset: number, length = PROFILE_CHUNK_BYTES): string {
  if (!Number.isInteger(offset) || offset < 0 || !Number.isInteger(length) || length < 1 || length > PROFILE_CHUNK_BYTES) throw new Error(`bad chunk ${offset}+${length}`);
  return `${HEADER}tail -c +${offset + 1} "$home/profiles/${checkName(name)}.pb.gz" | head -c ${length} | base64 -w0\n`;
}

export function removeProfileScript(name: string): string {
  return `${HEADER}rm -f "$home/profiles/${checkName(name)}.pb.gz"\n`;
}

export interface FetchProfileOptions {
  shell: RemoteShell;
  node: BenchNode;
  /** A file name for the node: the run's name. */
  name: string;
  seconds: number;
  /** The slot's Mattermost metrics port (8067, slot b 8167). */
  metricsPort: number;
  /** Bytes per command, at most PROFILE_CHUNK_BYTES. */
  chunkBytes?: number;
}

/** Profiles one node for `seconds`, brings the file back chunk by chunk, checks its digest, and removes it from the node. */
export async function fetchCpuProfile(o: FetchProfileOptions): Promise<Buffer> {
  const captured = (await runOnNodes(o.shell, [o.node], captureProfileScript(o.name, o.seconds, o.metricsPort), 'profile Mattermost', { timeoutSec: o.seconds + 120 })).get(o.node.name);
  const m = /^(\d+) ([0-9a-f]{64})$/.exec(captured?.stdout.trim() ?? '');
  if (!m) throw new Error(`profiling Mattermost on ${o.node.name} printed ${JSON.stringify(captured?.stdout.slice(0, 200))}, not "<size> <sha256>"`);
  const size = Number(m[1]);
  const step = o.chunkBytes ?? PROFILE_CHUNK_BYTES;
  const chunks: Buffer[] = [];
  try {
    for (let offset = 0; offset < size; offset += step) {
      const part = (await runOnNodes(o.shell, [o.node], readProfileChunkScript(o.name, offset, Math.min(step, size - offset)), 'read the profile', { timeoutSec: 60 })).get(o.node.name);
      chunks.push(Buffer.from(part?.stdout.trim() ?? '', 'base64'));
    }
  } finally {
    await runOnNodes(o.shell, [o.node], removeProfileScript(o.name), 'remove the profile', { timeoutSec: 60 }).catch(() => undefined);
  }
  const bytes = Buffer.concat(chunks);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length !== size || digest !== m[2]) throw new Error(`the profile from ${o.node.name} arrived damaged: ${bytes.length} of ${size} bytes, SHA-256 ${digest.slice(0, 12)} against ${m[2]?.slice(0, 12)}`);
  return bytes;
}

/** fetchCpuProfile, decoded to CPU time per function. */
export async function fetchGoCpuProfile(o: FetchProfileOptions): Promise<GoCpuProfile> {
  return aggregateGoCpuProfile(await fetchCpuProfile(o));
}
