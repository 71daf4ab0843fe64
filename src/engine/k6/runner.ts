import { access, constants, readFile, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { CEILING_ACTION_FREQUENCIES } from '../../chat-servers/mattermost/defaults.ts';
import type { ExitInfo, ManagedProcess, ProcessSupervisor } from '../../util/process.ts';
import { InputError, formatIssuePath } from '../../util/errors.ts';
import { K6Api } from './api.ts';
import { readClientMetrics, totalErrors } from './client-metrics.ts';
import { countCpus, processCpuSeconds } from './process-cpu.ts';

/**
 * Starts k6 with a loadgate scenario under the bench's process supervisor and drives it
 * through k6's REST API (127.0.0.1 only): the scenario uses the externally-controlled
 * executor with maxVUs = maxUsers, and `setUsers` moves the number of active VUs.
 */

export const DEFAULT_SCENARIO = fileURLToPath(new URL('./scenarios/matrix.js', import.meta.url));

const cpuList = z.string().regex(/^\d+(-\d+)?(,\d+(-\d+)?)*$/, 'expected a CPU list such as "1" or "0-1"');

const optionsSchema = z.object({
  k6Path: z.string().min(1),
  runDir: z.string().min(1),
  baseUrl: z.string().regex(/^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d{1,5})?\/?$/, 'expected a loopback URL such as http://127.0.0.1:8080'),
  usersFile: z.string().min(1),
  maxUsers: z.number().int().positive(),
  initialUsers: z.number().int().nonnegative(),
  idle: z.object({
    minimumMs: z.number().int().nonnegative(),
    averageMs: z.number().int().positive(),
    rateMultiplier: z.number().positive(),
  }),
  actions: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, 'expected an action name'), z.number().nonnegative()).optional(),
  cpus: cpuList.optional(),
  apiPort: z.number().int().min(1024).max(65535),
  scenario: z.string().min(1).optional(),
  requestTimeoutMs: z.number().int().positive().default(10_000),
  maxDurationSec: z
    .number()
    .int()
    .positive()
    .default(6 * 3600),
  readyTimeoutMs: z.number().int().positive().optional(),
  name: z.string().min(1).default('k6'),
  env: z.record(z.string().regex(/^LOADGATE_[A-Z0-9_]+$/, 'extra variables must start with LOADGATE_'), z.string()).default({}),
});

export type StartK6Options = z.input<typeof optionsSchema> & {
  supervisor: ProcessSupervisor;
};

export interface K6Stats {
  /** Requests finished by simulated users (including failed and timed-out ones). */
  requests: number;
  /** Responses with status >= 400 and transport failures. */
  errors: number;
  timeouts: number;
  droppedIterations: number;
  /** k6's CPU since the previous stats() call (or start), as % of the CPUs it may use. */
  engineCpuPercent: number;
  /** Highest 5-second CPU sample since start, same unit. */
  engineCpuPercentMax: number;
  engineCpuSeconds: number;
  /** Exceptions in the scenario script: a non-zero count means the scenario is broken. */
  scriptErrors: number;
  /** action -> times started. */
  actions: Record<string, number>;
}

export interface K6Run {
  readonly process: ManagedProcess;
  readonly apiPort: number;
  readonly logFile: string;
  readonly maxUsers: number;
  setUsers(n: number): Promise<void>;
  activeUsers(): Promise<number>;
  stats(): Promise<K6Stats>;
  /** Stops k6 (SIGTERM, then SIGKILL); safe to call more than once. */
  stop(): Promise<ExitInfo>;
}

const CPU_SAMPLE_MS = 5000;

export async function startK6(options: StartK6Options): Promise<K6Run> {
  const o = await checkedOptions(options);
  const usersFile = resolve(o.usersFile);
  const logFile = join(o.runDir, `${fileStem(o.name)}.log`);
  const proc = await options.supervisor.spawn({
    name: o.name,
    command: o.k6Path,
    args: k6Args(o),
    logFile,
    env: k6Environment(o, usersFile),
    cwd: o.runDir,
    ...(o.cpus ? { cpus: o.cpus } : {}),
    stopSignal: 'SIGTERM',
    stopTimeoutMs: 10_000,
  });

  const api = new K6Api({ port: o.apiPort });
  try {
    await waitUntilRunning(api, proc, o.maxUsers, o.readyTimeoutMs ?? 30_000 + 50 * o.maxUsers);
  } catch (error) {
    await proc.stop();
    throw error;
  }
  return controlledRun(o, proc, api, logFile);
}

type K6Options = z.output<typeof optionsSchema>;

const fileStem = (name: string) => name.replace(/[^A-Za-z0-9_.-]+/g, '-');

/** The options parsed, and every file, binary and port they name checked, before anything starts. */
async function checkedOptions(options: StartK6Options): Promise<K6Options> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`invalid k6 engine settings:\n  ${problems.join('\n  ')}`, problems);
  }
  const o = parsed.data;
  if (o.initialUsers > o.maxUsers) {
    throw new InputError(`k6: initialUsers (${o.initialUsers}) is larger than maxUsers (${o.maxUsers})`);
  }
  await assertReadable(resolve(o.scenario ?? DEFAULT_SCENARIO), 'k6 scenario');
  await assertReadable(resolve(o.usersFile), 'users file');
  await access(o.k6Path, constants.X_OK).catch(() => {
    throw new InputError(`k6 binary ${o.k6Path} is missing or not executable; ensureK6() installs it`);
  });
  await assertPortFree(o.apiPort);
  return o;
}

function k6Args(o: K6Options): string[] {
  return [
    'run',
    '--quiet',
    '--no-color',
    '--no-usage-report',
    '--no-thresholds',
    '--include-system-env-vars', // the LOADGATE_* settings reach the script as __ENV
    '--address',
    `127.0.0.1:${o.apiPort}`,
    '--summary-export',
    join(o.runDir, `${fileStem(o.name)}-summary.json`),
    resolve(o.scenario ?? DEFAULT_SCENARIO),
  ];
}

/** A running k6 as the coordinator drives it: users set over its REST API, stats and CPU read from it. */
function controlledRun(o: K6Options, proc: ManagedProcess, api: K6Api, logFile: string): K6Run {
  const cpu = new CpuTracker(proc, o.cpus ? countCpus(o.cpus) : availableParallelism());
  cpu.start();
  void proc.exited.then(() => cpu.stop());
  return {
    process: proc,
    apiPort: o.apiPort,
    logFile,
    maxUsers: o.maxUsers,
    async setUsers(n: number) {
      if (!Number.isInteger(n) || n < 0 || n > o.maxUsers) {
        throw new RangeError(`k6: cannot set ${n} users; expected an integer from 0 to maxUsers (${o.maxUsers})`);
      }
      const status = await explainFailure(proc, api.setVUs(n));
      if (status.vus !== n) throw new Error(`k6 answered ${status.vus} active users after being asked for ${n}`);
    },
    async activeUsers() {
      return (await explainFailure(proc, api.status())).vus;
    },
    async stats() {
      const client = readClientMetrics(await explainFailure(proc, api.metrics()));
      const { percent, seconds } = await cpu.sinceLastCall();
      return {
        requests: client.requests,
        errors: totalErrors(client),
        timeouts: client.timeouts,
        droppedIterations: client.droppedIterations,
        engineCpuPercent: percent,
        engineCpuPercentMax: cpu.maxPercent,
        engineCpuSeconds: seconds,
        scriptErrors: client.scriptErrors,
        actions: Object.fromEntries(client.actions),
      };
    },
    async stop() {
      cpu.stop();
      return proc.stop();
    },
  };
}

/** A failed REST call to a k6 that has exited is reported as the exit, naming its log. */
async function explainFailure<T>(proc: ManagedProcess, call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    if (!proc.running || (await Promise.race([proc.exited.then(() => true), sleepMs(300).then(() => false)]))) {
      throw new Error(`k6 is not running: ${proc.describeExit()}`, { cause: error });
    }
    throw error;
  }
}

const sleepMs = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

function k6Environment(o: K6Options, usersFile: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Loopback only: no proxy settings leak in, and k6 sends no usage report.
  for (const [key, value] of Object.entries(process.env)) {
    if (!/proxy$/i.test(key) && !key.startsWith('K6_') && !key.startsWith('LOADGATE_')) env[key] = value;
  }
  Object.assign(env, scenarioEnvironment({ ...o, usersFile }));
  return env;
}

export interface ScenarioSettings {
  baseUrl: string;
  usersFile: string;
  actions?: Record<string, number> | undefined;
  idle: { minimumMs: number; averageMs: number; rateMultiplier: number };
  maxUsers: number;
  initialUsers: number;
  maxDurationSec: number;
  requestTimeoutMs: number;
  env?: Record<string, string>;
}

/**
 * The environment a loadgate scenario reads (src/engine/k6/README.md, "Scenario environment"),
 * plus the settings that keep k6 from calling out. Shared by the local runner and the
 * AWS agents, which receive it as an environment file.
 */
export function scenarioEnvironment(o: ScenarioSettings): Record<string, string> {
  return {
    ...o.env,
    K6_NO_USAGE_REPORT: 'true',
    // k6 1.x resolves unknown `k6/x/...` imports by downloading extensions; never here.
    K6_AUTO_EXTENSION_RESOLUTION: 'false',
    LOADGATE_BASE_URL: o.baseUrl.replace(/\/$/, ''),
    LOADGATE_USERS_FILE: o.usersFile,
    LOADGATE_ACTIONS: JSON.stringify(o.actions ?? CEILING_ACTION_FREQUENCIES),
    LOADGATE_IDLE_MIN_MS: String(o.idle.minimumMs),
    LOADGATE_IDLE_AVG_MS: String(o.idle.averageMs),
    LOADGATE_IDLE_RATE: String(o.idle.rateMultiplier),
    LOADGATE_MAX_USERS: String(o.maxUsers),
    LOADGATE_INITIAL_USERS: String(o.initialUsers),
    LOADGATE_DURATION: `${o.maxDurationSec}s`,
    LOADGATE_REQUEST_TIMEOUT_MS: String(o.requestTimeoutMs),
  };
}

/** The Mattermost scenario and the libraries it imports (shared metrics, typed request bodies), relative to scenarios/. */
export const MATTERMOST_SCENARIO_FILES = ['mattermost.js', 'lib/metrics.js', 'lib/mattermost-bodies.js'] as const;
export const SCENARIOS_DIR = fileURLToPath(new URL('./scenarios/', import.meta.url));

async function assertReadable(path: string, what: string): Promise<void> {
  try {
    if (!(await stat(path)).isFile()) throw new Error('not a file');
    await access(path, constants.R_OK);
  } catch {
    throw new InputError(`${what} ${path} does not exist or is not readable`);
  }
}

/** Fails early with a clear message; otherwise k6 would die with "address already in use". */
async function assertPortFree(port: number): Promise<void> {
  await new Promise<void>((resolvePort, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new InputError(`k6 REST API port ${port} on 127.0.0.1 is already taken; choose another apiPort`) : error),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolvePort()));
  });
}

async function waitUntilRunning(api: K6Api, proc: ManagedProcess, maxUsers: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (!proc.running) {
      throw new Error(`k6 stopped before the test started: ${proc.describeExit()}\n${await logTail(proc.logFile)}`);
    }
    const status = await api.status().catch((error: Error) => {
      last = error.message;
      return undefined;
    });
    if (status) {
      last = `phase ${status.phase}, ${status.vusMax}/${maxUsers} users initialised`;
      if (status.running && status.phase === 'running') {
        // Another k6 on this port would answer too: make sure it is ours.
        if (status.vusMax !== maxUsers) {
          throw new Error(`the k6 at ${api.baseUrl} has ${status.vusMax} max users, expected ${maxUsers}: not the one loadgate started`);
        }
        return;
      }
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`k6 did not start within ${Math.round(timeoutMs / 1000)} s (${last}); see its log: ${proc.logFile}`);
}

async function logTail(file: string, lines = 8): Promise<string> {
  try {
    const text = await readFile(file, 'utf8');
    return text
      .trimEnd()
      .split('\n')
      .slice(-lines)
      .map((l) => `  | ${l}`)
      .join('\n');
  } catch {
    return '';
  }
}

/** Samples the k6 process's CPU every 5 s (for the max) and between stats() calls. */
class CpuTracker {
  maxPercent = 0;
  private timer: NodeJS.Timeout | undefined;
  private sample: { at: number; cpu: number } | undefined;
  private lastCall: { at: number; cpu: number } | undefined;
  private lastPercent = 0;
  private lastSeconds = 0;

  constructor(
    private readonly proc: ManagedProcess,
    private readonly cpus: number,
  ) {}

  start(): void {
    void this.read().then((now) => {
      if (now) this.sample = this.lastCall = now;
    });
    this.timer = setInterval(() => void this.tick(), CPU_SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  async sinceLastCall(): Promise<{ percent: number; seconds: number }> {
    const now = await this.read();
    if (now) {
      this.lastSeconds = now.cpu;
      if (this.lastCall && now.at - this.lastCall.at >= 500) {
        this.lastPercent = this.percent(this.lastCall, now);
        this.lastCall = now;
      } else if (!this.lastCall) {
        this.lastCall = now;
      }
    }
    return { percent: this.lastPercent, seconds: this.lastSeconds };
  }

  private async tick(): Promise<void> {
    const now = await this.read();
    if (!now) return;
    if (this.sample) this.maxPercent = Math.max(this.maxPercent, this.percent(this.sample, now));
    this.sample = now;
  }

  private percent(from: { at: number; cpu: number }, to: { at: number; cpu: number }): number {
    const wallSeconds = (to.at - from.at) / 1000;
    return wallSeconds > 0 ? ((to.cpu - from.cpu) / wallSeconds / this.cpus) * 100 : 0;
  }

  private async read(): Promise<{ at: number; cpu: number } | undefined> {
    const pid = this.proc.pid;
    if (pid === undefined || !this.proc.running) return undefined;
    const cpu = await processCpuSeconds(pid).catch(() => undefined);
    return cpu === undefined ? undefined : { at: Date.now(), cpu };
  }
}

/** Resolves a scenario path from the gate config relative to the config file's folder. */
export function resolveScenarioPath(scenario: string | undefined, configDir: string): string {
  if (!scenario) return DEFAULT_SCENARIO;
  return isAbsolute(scenario) ? scenario : resolve(configDir, scenario);
}
