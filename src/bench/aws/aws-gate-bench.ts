import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Progress } from '../progress.ts';
import { processRunner, type CommandRunner } from '../../util/command-runner.ts';
import { readSecretString } from '../../aws/secrets.ts';
import { awsBenchDescriptionSchema, type AwsBenchDescription } from '../../aws/terraform-outputs.ts';
import { realClock, type Clock } from '../../coordinator/index.ts';
import type { TestSpec } from '../../config/schema.ts';
import { PrometheusClient } from '../../metrics/prometheus.ts';
import type { BenchFingerprint, RunResult } from '../../results/schema.ts';
import type { GateBench } from '../gate-bench.ts';
import type { ChatServer, NodesServer, ProfileCapability, Profiler } from '../../chat-servers/chat-server.ts';
import type { AwsRunInputs, RunOptions, ScheduledRun } from '../gate-plan.ts';
import { duetParts, type DuetPart } from '../run-stage.ts';
import { InputError, formatIssuePath } from '../../util/errors.ts';
import { AppNodes } from './app-nodes.ts';
import { agentNodes, createLoadAgents, type LoadAgents } from './load-agents.ts';
import { executeAwsRun, type AwsRunDeps } from './run-attempt.ts';
import { runOnNodes, type BenchNode, type RemoteShell } from './remote-shell.ts';
import { dumpLoadWarning, readinessScript } from './scripts.ts';
import { BenchExpiry } from './expiry.ts';
import { slotOverheadSec } from '../../aws/cost.ts';
import { RunSnapshots } from './snapshots.ts';
import { SsmShell } from './ssm-shell.ts';
import { datasetLoginOnce } from '../../chat-servers/mattermost/dataset-login.ts';

/**
 * `loadgate run` on a provisioned AWS bench (bench.json from `loadgate tf-outputs`): the
 * same gate loop, coordinator, run-result format and comparison as the local bench. The
 * controller (the GitHub runner) reaches the nodes three ways: SSM Run Command for the
 * app nodes and agents (RemoteShell), the agents' engine APIs, and the metrics node's
 * Prometheus and Grafana; the bench's security groups admit it on those ports only. The
 * proxy and app addresses are private to the VPC: only the agents load them, and anything
 * the controller asks Mattermost goes through SSM on an app node.
 */

/** Times the bench works to; the loopback test shortens them. */
export interface AwsTiming {
  /** Prometheus' scrape interval on the metrics node (metrics.sh.tftpl). */
  scrapeIntervalSec: number;
  /** Rate window of the collected series (the seed queries use 1m). */
  rateWindowSec: number;
  /** Node 0 migrates the schema on its first start of a version: generous. */
  firstStartTimeoutSec: number;
  startTimeoutSec: number;
  /** k6 initialising its VUs on the agents. */
  agentReadyTimeoutSec: number;
  /** Booting nodes may still be loading the dump (about 45 minutes for the seed's). */
  readinessTimeoutSec: number;
  /** Between two checks that the agents and app nodes are still up during a run. */
  watchIntervalSec: number;
  /** The metrics node's Alloy scrape_interval for the app nodes' CPU profiles (metrics.sh.tftpl alloy_config). */
  profileScrapeIntervalSec: number;
}

/** As the bench is built (infra/aws; test/aws/userdata.test.ts checks the profiles' interval against its template). */
export const AWS_TIMING: AwsTiming = {
  scrapeIntervalSec: 5,
  rateWindowSec: 60,
  firstStartTimeoutSec: 3600,
  startTimeoutSec: 900,
  agentReadyTimeoutSec: 300,
  readinessTimeoutSec: 3 * 3600,
  watchIntervalSec: 15,
  profileScrapeIntervalSec: 15,
};

export interface AwsBenchDeps {
  shell: RemoteShell;
  /** The `aws` CLI, for the Grafana token. */
  aws: CommandRunner;
  /** Base URL the controller uses for host:port of the bench description (identity on AWS). */
  endpoint?: (host: string, port: number) => string;
  /** Prometheus and Grafana base URLs, when they differ from the description's. */
  prometheusUrl?: string;
  grafanaUrl?: string;
  pyroscopeUrl?: string;
  timing?: Partial<AwsTiming>;
  clock?: Clock;
  /** load-test-ng's admin login; default from LOADGATE_ADMIN_EMAIL / LOADGATE_ADMIN_PASSWORD. */
  admin?: { email: string; password: string };
}

/** Reads and checks bench.json; every problem names the field and the file. */
export async function readBenchFile(file: string): Promise<AwsBenchDescription> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    throw new InputError(`--bench-file: cannot read ${file} as JSON: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const parsed = awsBenchDescriptionSchema.safeParse(json);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(
      `--bench-file: ${file} is not an AWS bench description (write it with \`terraform output -json | loadgate tf-outputs -\`):\n${lines.join('\n')}`,
      lines,
    );
  }
  return parsed.data;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The chat server, refused up front unless its adapter runs on the bench's nodes and, with `profile: on`, can profile them. */
function serverOnNodes(o: RunOptions): ChatServer & { nodes: NodesServer } {
  const { nodes } = o.server;
  if (!nodes)
    throw new InputError(
      `target.system: ${o.server.displayName} does not run on the AWS bench's nodes; use the bench its adapter runs on (bench.kind: ${o.server.bench})`,
    );
  if (o.config.profile === 'on' && !o.server.profile)
    throw new InputError(`profile: on: loadgate cannot profile ${o.server.displayName} on this bench; set profile: off`);
  return { ...o.server, nodes };
}

export class AwsGateBench implements GateBench {
  get system(): string {
    return this.server.system;
  }
  /** The chat server the nodes run. */
  private readonly server: ChatServer & { nodes: NodesServer };
  /**
   * What a run spends besides its test (stop, restore, migrations, agents, collection), so
   * the job budget never starts a run whose set-up would carry it past the runner's limit:
   * the longest set-up this job has measured. Before the first run of a job there is none;
   * that run starts at the job's beginning, and plan refuses a gate where one run with the
   * stated set-up (cost.ts RUN_SETUP_SEC) does not fit a job.
   */
  get runOverheadSec(): number {
    return this.setupTimes.budgetSec();
  }
  private readonly setupTimes = new SetupTimes();
  /** The longest test of the step running now (one run, or a duet's two). */
  private testSec: number | undefined;
  private readonly timing: AwsTiming;
  /** `profile: on`: the server's profile capability, and its profiler once set up. */
  private readonly profiling: ProfileCapability | undefined;
  private profiler: Profiler | undefined;
  /** One per slot: one on a sequential run, two in a duet. */
  private readonly rigs: SlotRig[];
  private readonly clock: Clock;
  private readonly apps: BenchNode[];
  private signal: AbortSignal = new AbortController().signal;
  private readonly loadState = { lastLoadEndMs: 0 };
  private broken: string | undefined;
  private readonly warnings: string[] = [];
  private current: BenchFingerprint;
  private readonly expiry: BenchExpiry;

  static async create(o: RunOptions, progress: Progress, logDir: string): Promise<AwsGateBench> {
    if (!o.aws) throw new Error('not an AWS run');
    const bench = await readBenchFile(o.aws.benchFile);
    const admin =
      process.env.LOADGATE_ADMIN_EMAIL && process.env.LOADGATE_ADMIN_PASSWORD
        ? { email: process.env.LOADGATE_ADMIN_EMAIL, password: process.env.LOADGATE_ADMIN_PASSWORD }
        : undefined;
    return new AwsGateBench(o, progress, logDir, bench, {
      shell: new SsmShell(processRunner, { region: bench.region }),
      aws: processRunner,
      ...(admin ? { admin } : {}),
    });
  }

  constructor(
    private readonly o: RunOptions,
    private readonly progress: Progress,
    private readonly logDir: string,
    private readonly bench: AwsBenchDescription,
    private readonly deps: AwsBenchDeps,
  ) {
    const aws = o.aws;
    if (!aws) throw new Error('not an AWS run');
    this.server = serverOnNodes(o);
    this.profiling = o.config.profile === 'on' ? o.server.profile : undefined;
    this.timing = { ...AWS_TIMING, ...deps.timing };
    this.clock = deps.clock ?? realClock;
    this.apps = bench.app.instanceIds.map((id, i) => ({ id, name: `app${i}` }));
    this.expiry = this.createExpiry();
    this.rigs = this.createRigs(aws);
    this.current = {
      kind: 'aws',
      instances: bench.instances,
      versions: {
        engine: bench.agents.engine === 'k6' ? `k6 ${o.config.engine.version}` : `load-test-ng ${o.config.engine.version}`,
        database: `Aurora PostgreSQL (${bench.database.clusterIdentifier}${this.rigs.length === 2 ? ', one database per side' : ''})`,
        ...(bench.openSearchEndpoint ? { search: 'OpenSearch' } : {}),
      },
      ...(o.config.dataset ? { dataset: o.config.dataset } : {}),
    };
  }

  /** Keeps every node of the bench alive past the job's budget; a warning it raises goes to the report once. */
  private createExpiry(): BenchExpiry {
    const { bench } = this;
    return new BenchExpiry({
      aws: this.deps.aws,
      region: bench.region,
      instanceIds: [
        ...bench.app.instanceIds,
        ...bench.agents.instanceIds,
        bench.metrics.instanceId,
        ...(bench.proxy.instanceId ? [bench.proxy.instanceId] : []),
      ],
      scheduleGroup: bench.benchName,
      warn: (note) => {
        this.progress.problem(note, 'warning');
        if (!this.warnings.includes(note)) this.warnings.push(note);
      },
    });
  }

  /** One rig on a sequential run; a duet needs a bench provisioned with its two slots. */
  private createRigs(aws: AwsRunInputs): SlotRig[] {
    const { bench } = this;
    if (this.o.config.mode !== 'duet') return [this.createRig(aws)];
    if (bench.duetSlots.length !== 2) {
      throw new InputError(
        `mode: duet: the bench ${bench.benchName} (--bench-file ${aws.benchFile}) was provisioned without duet slots; provision it from this config (bench variable duet = true), or set mode: sequential`,
      );
    }
    return bench.duetSlots.map((slot) => this.createRig(aws, slot));
  }

  /** The app nodes, agents, Prometheus and snapshots one slot (or the whole sequential bench) works with. */
  private createRig(aws: AwsRunInputs, slot?: AwsBenchDescription['duetSlots'][number]): SlotRig {
    const { o, bench, deps } = this;
    const endpoint = deps.endpoint ?? ((host: string, port: number) => `http://${host}:${port}`);
    const token = (): Promise<string> => readSecretString(deps.aws, bench.region, bench.metrics.grafanaTokenSecretArn);
    return {
      ...(slot ? { slot: slot.slot } : {}),
      // Slot a's Prometheus is the bench's (prometheus_url); slot b has its own.
      prometheus: new PrometheusClient(slot?.slot === 'b' ? slot.prometheusUrl : (deps.prometheusUrl ?? slot?.prometheusUrl ?? bench.metrics.prometheusUrl)),
      appNodes: new AppNodes({
        server: this.server.nodes,
        shell: deps.shell,
        nodes: this.apps,
        firstStartTimeoutSec: this.timing.firstStartTimeoutSec,
        startTimeoutSec: this.timing.startTimeoutSec,
        onStep: (line) => this.progress.info(line),
        ...(slot ? { slot: { name: slot.slot, appPort: slot.appPort } } : {}),
      }),
      agents: createLoadAgents({
        config: o.config,
        configDir: dirname(o.configFile),
        bench,
        shell: deps.shell,
        endpoint,
        readyTimeoutSec: this.timing.agentReadyTimeoutSec,
        ...(deps.admin ? { admin: deps.admin } : {}),
        ...(slot ? { group: { agentIndices: slot.agentIndices, proxyUrl: slot.proxyUrl, prometheusUrl: slot.prometheusUrl } } : {}),
      }),
      checkAccounts: accountsCheck(aws.usersFile, bench, deps, this.apps, slot),
      snapshots: new RunSnapshots({
        grafanaUrl: deps.grafanaUrl ?? bench.metrics.grafanaUrl,
        token,
        mode: aws.snapshots,
        ...(slot ? { datasourceUid: slot.slot === 'a' ? 'prometheus' : 'prometheus-b', metricsPort: slot.metricsPort } : {}),
      }),
    };
  }

  expandHealthQuery(query: string): string {
    return query;
  }

  handleSignals(onSignal: (signal: NodeJS.Signals) => void): void {
    // The first signal ends the gate cleanly (the load is stopped on the agents); a second exits.
    const handler = (signal: NodeJS.Signals): void => {
      this.progress.problem(`received ${signal}: stopping the load on the agents, then the gate (again to exit at once)`);
      process.once(signal, () => process.exit(signal === 'SIGINT' ? 130 : 143));
      onSignal(signal);
    };
    process.once('SIGINT', handler);
    process.once('SIGTERM', handler);
  }

  fingerprint(): BenchFingerprint {
    return this.current;
  }

  private nodes(): { apps: BenchNode[]; agents: BenchNode[]; others: BenchNode[] } {
    const others: BenchNode[] = [{ id: this.bench.metrics.instanceId, name: 'metrics0' }];
    if (this.bench.proxy.instanceId) others.push({ id: this.bench.proxy.instanceId, name: 'proxy0' });
    return { apps: this.apps, agents: agentNodes(this.bench), others };
  }

  async setUp(signal: AbortSignal): Promise<void> {
    const aws = this.o.aws!;
    this.signal = signal;
    await mkdir(this.logDir, { recursive: true });
    this.profiler = await this.prepareProfiler(signal);
    const { shell } = this.deps;
    const nodes = this.nodes();
    // This job may wait for the dump load, then run until its budget: the bench must outlive both.
    await this.expiry.extend(this.o.jobBudgetSec ?? this.timing.readinessTimeoutSec);
    this.progress.begin(`AWS bench ${this.bench.benchName} in ${this.bench.region}: waiting for every node's user data`);
    const limit = { timeoutSec: this.timing.readinessTimeoutSec };
    const [apps] = await Promise.all([
      runOnNodes(shell, nodes.apps, readinessScript('loadgate-mattermost'), 'app node set-up', limit),
      runOnNodes(shell, nodes.agents, readinessScript(this.bench.agents.engine === 'k6' ? 'loadgate-agent' : 'none'), 'agent set-up', limit),
      runOnNodes(shell, nodes.others, readinessScript('none'), 'metrics and proxy set-up', limit),
    ]);
    const dumpWarning = [...apps.values()].map((r) => dumpLoadWarning(r.stdout)).find((w) => w !== undefined);
    if (dumpWarning) {
      this.warnings.push(`The bench's set-up: ${dumpWarning}.`);
      this.progress.problem(dumpWarning, 'warning');
    }
    for (const rig of this.rigs) await waitForPrometheus(rig.prometheus);
    // The licence is asked after each run's restore and start (AppNodes.prepare), not here:
    // the servers user data started may still hold the dump's licence rows.
    this.progress.begin('AWS bench: uploading the users file and the scenario to the agents');
    // In a duet each agent group runs the same users against its own copy of the dataset.
    for (const rig of this.rigs) await rig.agents.prepare(aws.usersFile);
    const layout = this.rigs.length === 2 ? `; duet: slot a and slot b, ${this.rigs.map((r) => `${r.agents.size} agent(s)`).join(' and ')}` : '';
    this.progress.info(
      `${nodes.apps.length} app node(s), ${nodes.agents.length} ${this.bench.agents.engine} agent(s), ${this.bench.proxy.instanceId ? 'an nginx proxy' : 'no proxy (one app node)'}; Prometheus ${this.rigs.map((r) => r.prometheus.baseUrl).join(', ')}${layout}`,
    );
  }

  /** `profile: on`: the server's profiler, refused up front when it cannot work here, readied once. */
  private async prepareProfiler(signal: AbortSignal): Promise<Profiler | undefined> {
    if (!this.profiling) return undefined;
    const refusal = await this.profiling.refusal?.();
    if (refusal) throw new InputError(refusal);
    return this.profiling.prepare({ cacheDir: this.o.cacheDir, onStep: (line) => this.progress.info(line), signal });
  }

  stopReason(): string | undefined {
    return this.broken;
  }

  async tearDown(): Promise<string[]> {
    // The bench itself is destroyed by the teardown job; here the load stops.
    return (await Promise.all(this.rigs.map((r) => r.agents.stop()))).flat();
  }

  tornDownMessage(): string {
    return `the load is stopped on every agent; the bench ${this.bench.benchName} stays up until the teardown job destroys it`;
  }

  notes(fatal: readonly string[]): string[] {
    const { o, bench } = this;
    const instances = Object.entries(bench.instances)
      .map(([role, what]) => `${role} ${what}`)
      .join(', ');
    const notes = [
      `AWS bench ${bench.benchName} in ${bench.region}: ${instances}; ${bench.agents.engine} agents drive ${bench.proxy.instanceId ? 'the nginx proxy' : 'the single app node directly (no proxy, as on the seed benches with one app node)'}.`,
      `${o.config.dataset ?? "The bench's dataset"}; recreated from its pristine copy before every run, so both versions start from the same data.`,
    ];
    for (const side of [o.baseline, o.candidate]) {
      if (side.sideOverrides.length)
        notes.push(`${side.role} ${side.label} ran with config overrides: ${side.sideOverrides.map((x) => `\`${x.text}\``).join(', ')}.`);
    }
    if (this.rigs.length === 2) notes.push(duetNote(bench));
    notes.push(
      'CPU is the Mattermost process\'s (mattermost_process_cpu_seconds_total) in % of one core, averaged over the app nodes; heap and stack in use are go_memstats_{heap,stack}_inuse_bytes summed over the app nodes, as in the seed reports; "threads" are goroutines.',
    );
    notes.push(...this.warnings);
    for (const f of fatal) notes.push(`The gate stopped early: ${f}`);
    return notes;
  }

  /** The test as the coordinator runs it: proxy health queries are disabled on a bench without a proxy. */
  private effectiveTest(test: TestSpec): TestSpec {
    if (test.type !== 'unbounded' || this.bench.proxy.instanceId) return test;
    const proxyQuery = /instance=~?"proxy/;
    const dropped = test.health.filter((h) => h.enabled && proxyQuery.test(h.query));
    if (!dropped.length) return test;
    const note = `Health queries on the proxy were not evaluated (the bench has one app node and no proxy): ${dropped.map((h) => `"${h.name}"`).join(', ')}.`;
    if (!this.warnings.includes(note)) this.warnings.push(note);
    return { ...test, health: test.health.map((h) => (dropped.includes(h) ? { ...h, enabled: false } : h)) };
  }

  async execute(run: ScheduledRun): Promise<RunResult> {
    await this.extendFor(run, 'baseline');
    return this.timed(async () => [await this.runOn(this.rigs[0] as SlotRig, run)]).then(([r]) => r as RunResult);
  }

  /** Before a step: the bench must outlive its test and set-up (the longer of the stated and the measured). */
  private async extendFor(run: ScheduledRun, side: 'baseline' | 'duet'): Promise<void> {
    const testSec = run.test.type === 'bounded' ? run.test.duration : run.test.maxDuration;
    await this.expiry.extend(testSec + Math.max(slotOverheadSec(side), this.runOverheadSec));
  }

  async executeDuet(runs: readonly [ScheduledRun, ScheduledRun]): Promise<[RunResult, RunResult]> {
    if (this.rigs.length !== 2) throw new Error('the AWS bench is not set up for duets (mode: duet)');
    await this.extendFor(runs[0], 'duet');
    const parts = duetParts(1);
    const [a, b] = await this.timed(() =>
      Promise.all(
        runs.map((run, i) => {
          const rig = this.rigs[i] as SlotRig;
          const part = parts.find((p) => p.slot === (rig.slot ?? 'a')) as DuetPart;
          return this.runOn(rig, run, part);
        }),
      ),
    );
    return [a as RunResult, b as RunResult];
  }

  /**
   * Runs `work` and records its set-up and wind-down: everything but the test itself (a
   * run that never reached its test measured none). A duet's runs meet at the test's
   * start and end, so the longer test stands for both.
   */
  private async timed(work: () => Promise<RunResult[]>): Promise<RunResult[]> {
    const startedMs = Date.now();
    this.testSec = undefined;
    const results = await work();
    if (this.testSec !== undefined) this.setupTimes.record((Date.now() - startedMs) / 1000 - this.testSec);
    return results;
  }

  /** The metrics node's Pyroscope (bench.json) as the profiler's continuous source, at the bench's Alloy interval. */
  private profileDeps(profiler: Profiler): NonNullable<AwsRunDeps['profile']> {
    const url = this.deps.pyroscopeUrl ?? this.bench.metrics.pyroscopeUrl;
    return { profiler, continuous: { url, scrapeIntervalSec: this.timing.profileScrapeIntervalSec }, dir: join(this.logDir, 'profiles') };
  }

  private runOn(rig: SlotRig, run: ScheduledRun, duet?: DuetPart): Promise<RunResult> {
    return executeAwsRun(
      {
        server: this.server,
        bench: this.bench,
        progress: this.progress,
        prometheus: rig.prometheus,
        appNodes: rig.appNodes,
        agents: rig.agents,
        checkAccounts: rig.checkAccounts,
        snapshots: rig.snapshots,
        fingerprint: this.current,
        timing: this.timing,
        maxEngineCpuPercent: this.o.config.bench.aws.maxEngineCpuPercent,
        ...(this.profiler ? { profile: this.profileDeps(this.profiler) } : {}),
        signal: this.signal,
        clock: this.clock,
        hints: this.o.hints,
        state: this.loadState,
        report: {
          broken: (reason) => (this.broken = reason),
          warning: (note) => this.warnings.push(note),
          testSec: (seconds) => (this.testSec = Math.max(this.testSec ?? 0, seconds)),
        },
      },
      run,
      this.effectiveTest(run.test),
      duet,
    );
  }
}

/** The dataset's admin and a user, logged in on app0 once per slot before its first test (dataset-login.ts). */
function accountsCheck(
  usersFile: string,
  bench: AwsBenchDescription,
  deps: AwsBenchDeps,
  apps: readonly BenchNode[],
  slot?: AwsBenchDescription['duetSlots'][number],
): () => Promise<string[]> {
  return datasetLoginOnce(
    async () => ({
      engine: bench.agents.engine,
      ...(deps.admin ? { admin: deps.admin } : {}),
      usersText: await readFile(usersFile, 'utf8'),
      usersFile,
      where: `app0${slot ? `, slot ${slot.slot}` : ''}`,
    }),
    slot?.appPort ?? 8065,
    async (script) =>
      (await runOnNodes(deps.shell, apps.slice(0, 1), script, "log in the dataset's admin and a user", { timeoutSec: 180 })).get('app0')?.stdout ?? '',
  );
}

/** What one slot of the bench is: a sequential run has one, a duet two. */
interface SlotRig {
  slot?: 'a' | 'b';
  prometheus: PrometheusClient;
  appNodes: AppNodes;
  agents: LoadAgents;
  checkAccounts: () => Promise<string[]>;
  snapshots: RunSnapshots;
}

/** The report's note on what a duet's sides shared on this bench, and what that means for their figures. */
function duetNote(bench: AwsBenchDescription): string {
  const [a, b] = bench.duetSlots;
  const apps = bench.app.instanceIds.length;
  return (
    `Duet: each baseline run ran at the same time as the candidate run of the same test and repeat, on the same ${apps} app node(s). ` +
    `Each side had its own Mattermost service on every app node (slot a on :${a?.appPort}, slot b on :${b?.appPort}, each in its own cgroup with equal CPU weight over all of the node's vCPUs), its own database in the one Aurora cluster ${bench.database.clusterIdentifier}, its own nginx entry point, agent group (${a?.agentIndices.length} and ${b?.agentIndices.length} agents) and Prometheus. ` +
    "The sides shared the app nodes' CPUs, memory and network, the proxy node, the Aurora writer's CPU, memory and storage, and the node metrics. " +
    "Supported users are per side, on about half of the app nodes' CPU, so they do not compare with a sequential run's or with the seed reports' absolute figures; a regression that loads the shared database slows both sides and shows smaller than it is. " +
    'The sides swap slots (services, ports, databases, agent groups) between repeats in Thue-Morse order.'
  );
}

async function waitForPrometheus(prometheus: PrometheusClient): Promise<void> {
  const deadline = Date.now() + 5 * 60_000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      await prometheus.query('vector(1)');
      return;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(2000);
  }
  throw new Error(`the metrics node's Prometheus (${prometheus.baseUrl}) does not answer: ${last}`);
}

/**
 * The set-up and wind-down budgeted for the next run: the longest measured so far (a slow
 * restore or migration is no one-off: every run restores the same dataset and migrates it
 * again).
 */
export class SetupTimes {
  private longestSec = 0;

  record(seconds: number): void {
    if (Number.isFinite(seconds) && seconds > this.longestSec) this.longestSec = seconds;
  }

  budgetSec(): number {
    return Math.ceil(this.longestSec);
  }
}
