import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatServer, LocalDataset } from '../../../src/chat-servers/chat-server.ts';
import { toSeries } from '../../../src/metrics/collected.ts';
import { availableCpus } from '../../../src/metrics/target-cpus.ts';
import type { RunResult, Series } from '../../../src/results/schema.ts';
import { LOOPBACK } from '../../../src/util/ports.ts';
import { httpOk, waitUntilReady } from '../../../src/util/readiness.ts';

/**
 * A third chat server, in the tests only: server.mjs (one request, /health, Prometheus
 * metrics on a second port) behind the same ChatServer interface as Synapse and
 * Mattermost, to show that the local bench runs any server through its capabilities. Its
 * "install" is the script itself, its dataset a users file, its scenario scenario.js.
 */
const SERVER = fileURLToPath(new URL('./server.mjs', import.meta.url));
export const ECHO_SCENARIO = fileURLToPath(new URL('./scenario.js', import.meta.url));
const RATE_WINDOW_SEC = 10;

async function collect(...[client, w, context]: Parameters<ChatServer['collect']>): ReturnType<ChatServer['collect']> {
  const rate = `${context.rateWindowSec}s`;
  const cpus = context.cpus ?? { target: '0', engine: '0', targetShare: 1 };
  const queries: Partial<Record<keyof RunResult['series'], [string, Series['unit']]>> = {
    apiAvgMs: [`1000 * sum(rate(echo_request_seconds_total[${rate}])) / sum(rate(echo_requests_total[${rate}]))`, 'ms'],
    rps: [`sum(rate(echo_requests_total[${rate}]))`, 'rps'],
    cpuPercent: [
      `100 * sum(rate(loadgate_target_group_cpu_seconds_total{job="process"}[${rate}])) / ${availableCpus(cpus.target, cpus.targetShare)}`,
      'percent',
    ],
    connectedUsers: ['max(loadgate_engine_active_users{job="k6"})', 'users'],
  };
  const series: RunResult['series'] = {};
  const problems: string[] = [];
  for (const [name, [query, unit]] of Object.entries(queries) as [keyof RunResult['series'], [string, Series['unit']]][]) {
    const range = (await client.queryRange(query, Math.ceil(w.runStart), Math.floor(w.runEnd), context.stepSec))[0];
    const s = range ? toSeries(range, w.runStart, unit) : undefined;
    if (s) series[name] = s;
    else problems.push(`no ${name} from Prometheus`);
  }
  const sec = `${Math.max(10, Math.round(w.stableEnd - w.stableStart))}s`;
  const one = async (query: string) => (await client.query(query, w.stableEnd))[0]?.value ?? NaN;
  const [count, sum, requests] = await Promise.all([
    one(`sum(increase(echo_requests_total[${sec}]))`),
    one(`sum(increase(echo_request_seconds_total[${sec}]))`),
    one(`sum(increase(loadtest_http_request_time_count{job="k6"}[${sec}]))`),
  ]);
  const avgMs = (1000 * sum) / count;
  return {
    series,
    api: Number.isFinite(avgMs) ? [{ name: 'GET /echo', count: Math.round(count), avgMs, p99Ms: avgMs }] : [],
    store: [],
    totals: { requests: Number.isFinite(requests) ? Math.round(requests) : 0, errors: 0, timeouts: 0 },
    problems,
    missingEssential: !series.apiAvgMs || !series.connectedUsers,
  };
}

export const echo: ChatServer = {
  system: 'echo',
  displayName: 'Echo',
  bench: 'local',
  baseOverrides: () => [],
  side: (_role, label) => ({ version: label, overrides: [], sideOverrides: [] }),
  datasetVersion: (baseline) => baseline,
  source: { owner: 'loadgate', repo: 'echo', path: () => undefined, tag: (v) => v },
  collect,
  local: {
    installKey: (side) => side.version,
    // Nothing to install: the server is a script of the checkout.
    install: async (side) => ({ key: side.version, version: side.version, dir: SERVER }),
    datasetKey: (size) => `echo-u${size.users}`,
    async findDataset(cacheDir, key) {
      const dir = join(cacheDir, 'datasets', key);
      const text = await readFile(join(dir, 'users.json'), 'utf8').catch(() => undefined);
      return text === undefined ? undefined : dataset(dir, JSON.parse(text) as unknown[]);
    },
    async buildDataset(o) {
      const dir = join(o.cacheDir, 'datasets', `echo-u${o.size.users}`);
      await mkdir(dir, { recursive: true });
      const users = Array.from({ length: o.size.users }, (_, i) => ({ user_id: `@user${i}:echo`, localpart: `user${i}`, password: 'x', rooms: [], dms: [] }));
      await writeFile(join(dir, 'users.json'), JSON.stringify(users));
      return { ...dataset(dir, users), buildSeconds: 0 };
    },
    async start(o) {
      o.onStep(`starting echo ${o.install.version}`);
      const proc = await o.supervisor.spawn({
        name: `echo ${o.install.version}`,
        command: process.execPath,
        args: [o.install.dir, String(o.host.ports.serverClient), String(o.host.ports.serverMetrics)],
        logFile: o.logFile,
        cpus: o.cpus,
        stopSignal: 'SIGTERM',
        stopTimeoutMs: 5000,
      });
      await waitUntilReady(() => httpOk(`http://${LOOPBACK}:${o.host.ports.serverClient}/health`), {
        component: 'echo',
        process: proc,
        timeoutMs: 30_000,
        what: 'answering /health',
      });
      return { process: proc, stop: async () => void (await proc.stop()) };
    },
    metrics: { path: '/metrics', rateWindowSec: RATE_WINDOW_SEC },
    engineEnv: () => ({}),
    notes: ["Echo: one request type; its API time is the server's own."],
  },
};

function dataset(dir: string, users: readonly unknown[]): LocalDataset {
  return { dir, usersFile: join(dir, 'users.json'), description: `Echo dataset: ${users.length} users` };
}
