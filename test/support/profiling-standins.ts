import { execFile } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { allocatePorts } from '../../src/util/ports.ts';
import { httpOk, waitUntilReady } from '../../src/util/readiness.ts';
import type { ManagedProcess, ProcessSupervisor } from '../../src/util/process.ts';

/**
 * The profile path's processes for tests, all on 127.0.0.1:
 * - mattermost-core (test/support/mattermost-core): a Mattermost-like Go process whose
 *   metrics listener serves Go's own net/http/pprof with Mattermost's 60 s WriteTimeout;
 *   `knowncause` builds it with extra CPU in one function;
 * - the Pyroscope and Alloy stand-ins (test/support/pyroscope-standin), since neither
 *   can be installed here (see its main.go); Alloy runs the bench's own config.alloy.
 * Programs are built with the machine's Go into `dir`; the stand-ins' modules come from
 * the Go module proxy (scripts/setup.sh --tests fetches them beforehand).
 */

const SUPPORT = fileURLToPath(new URL('.', import.meta.url));
const MATTERMOST_CORE_DIR = join(SUPPORT, 'mattermost-core');
const PYROSCOPE_STANDIN_DIR = join(SUPPORT, 'pyroscope-standin');
const METRICS_TEMPLATE = fileURLToPath(new URL('../../infra/aws/modules/bench/templates/metrics.sh.tftpl', import.meta.url));

export interface ProfilingBinaries {
  core: string;
  knownCause: string;
  standins: string;
}

/** Builds the three programs (a few seconds once Go's build cache is warm). */
export async function buildProfilingBinaries(dir: string): Promise<ProfilingBinaries> {
  await mkdir(dir, { recursive: true });
  const go = (cwd: string, out: string, extra: string[], env: NodeJS.ProcessEnv) =>
    promisify(execFile)('go', ['build', '-trimpath', ...extra, '-o', out, '.'], {
      cwd,
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '', ...env },
      maxBuffer: 1 << 22,
    });
  const out = { core: join(dir, 'mattermost-core'), knownCause: join(dir, 'mattermost-core-knowncause'), standins: join(dir, 'pyroscope-standin') };
  // The core is standard library only: nothing to download.
  await go(MATTERMOST_CORE_DIR, out.core, [], { GOPROXY: 'off' });
  await go(MATTERMOST_CORE_DIR, out.knownCause, ['-tags', 'knowncause'], { GOPROXY: 'off' });
  await go(PYROSCOPE_STANDIN_DIR, out.standins, [], {});
  return out;
}

export interface CoreProcess {
  process: ManagedProcess;
  /** host:port of its metrics listener (/debug/pprof). */
  metrics: string;
  /** Base URL of its API handlers (POST /api/v4/handlers/<name>). */
  appUrl: string;
}

/** Starts a mattermost-core build; `ports` keeps a slot's addresses across restarts. */
export async function startCore(
  supervisor: ProcessSupervisor,
  bin: string,
  o: { name: string; logFile: string; ports?: [number, number]; args?: string[] },
): Promise<CoreProcess> {
  const [metricsPort, appPort] = o.ports ?? ((await allocatePorts(2)) as [number, number]);
  const process = await supervisor.spawn({
    name: o.name,
    command: bin,
    args: ['-metrics', `127.0.0.1:${metricsPort}`, '-app', `127.0.0.1:${appPort}`, ...(o.args ?? [])],
    logFile: o.logFile,
    stopTimeoutMs: 3000,
  });
  const metrics = `127.0.0.1:${metricsPort}`;
  await waitUntilReady(() => httpOk(`http://${metrics}/debug/pprof/`), {
    component: o.name,
    process,
    logFile: o.logFile,
    timeoutMs: 20_000,
    what: 'serving /debug/pprof/',
  });
  return { process, metrics, appUrl: `http://127.0.0.1:${appPort}` };
}

export async function startPyroscope(supervisor: ProcessSupervisor, bin: string, logFile: string): Promise<{ process: ManagedProcess; url: string }> {
  const [port] = (await allocatePorts(1)) as [number];
  const process = await supervisor.spawn({
    name: 'pyroscope stand-in',
    command: bin,
    args: ['pyroscope', '-listen', `127.0.0.1:${port}`],
    logFile,
    stopTimeoutMs: 3000,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(() => httpOk(`${url}/ready`), { component: 'pyroscope stand-in', process, logFile, timeoutMs: 20_000, what: 'answering /ready' });
  return { process, url };
}

/**
 * The bench's config.alloy as the metrics node writes it: metrics.sh.tftpl's alloy_config,
 * run by bash with the bench's app node count and duet setting.
 */
export async function renderAlloyConfig(o: { appCount: number; duet: boolean }): Promise<string> {
  const template = await readFile(METRICS_TEMPLATE, 'utf8');
  const fn = template.slice(template.indexOf('alloy_config() {'), template.indexOf('mkdir -p /etc/loadgate/alloy'));
  if (!fn.startsWith('alloy_config() {')) throw new Error(`no alloy_config function in ${METRICS_TEMPLATE}`);
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', `DUET=${o.duet} APP_COUNT=${o.appCount}\n${fn}\nalloy_config`]);
  return stdout;
}

/**
 * Alloy running `config` (renderAlloyConfig's). `resolve` maps the bench's names
 * (app0:8067, the node's own 127.0.0.1:4040) to where those processes listen here;
 * `scrapeIntervalSec` replaces the file's 15 s, so seconds-long tests hold several profiles.
 */
export async function startAlloy(
  supervisor: ProcessSupervisor,
  bin: string,
  o: { config: string; resolve: Record<string, string>; scrapeIntervalSec: number; dir: string; logFile: string },
): Promise<ManagedProcess> {
  const configFile = join(o.dir, 'config.alloy');
  await writeFile(configFile, o.config);
  const resolve = Object.entries(o.resolve).flatMap(([from, to]) => ['-resolve', `${from}=${to}`]);
  const process = await supervisor.spawn({
    name: 'alloy stand-in',
    command: bin,
    args: ['alloy', '-config', configFile, '-scrape-interval', `${o.scrapeIntervalSec}s`, ...resolve],
    logFile: o.logFile,
    stopTimeoutMs: 3000,
  });
  await waitUntilReady(async () => (await readFile(o.logFile, 'utf8').catch(() => '')).includes('scraping'), {
    component: 'alloy stand-in',
    process,
    logFile: o.logFile,
    timeoutMs: 10_000,
    what: 'scraping',
  });
  return process;
}

/** Has the core spend requests' CPU in `handlers`, one after another in turn, until `untilMs` (Date.now()). */
export async function driveCore(appUrl: string, handlers: readonly string[], untilMs: number): Promise<number> {
  let done = 0;
  while (Date.now() < untilMs) {
    const handler = handlers[done % handlers.length] as string;
    const r = await fetch(`${appUrl}/api/v4/handlers/${handler}`, { method: 'POST' });
    if (r.status !== 204) throw new Error(`${handler}: HTTP ${r.status}`);
    done++;
  }
  return done;
}
