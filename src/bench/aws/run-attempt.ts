import type { Progress } from '../progress.ts';
import type { AwsBenchDescription } from '../../aws/terraform-outputs.ts';
import type { TestSpec } from '../../config/schema.ts';
import { mattermost } from '../../chat-servers/mattermost/chat-server.ts';
import type { PrometheusClient } from '../../metrics/prometheus.ts';
import type { BenchFingerprint, RunResult } from '../../results/schema.ts';
import { runId, type ScheduledRun } from '../gate-plan.ts';
import { executeRun } from '../run-sequence.ts';
import type { CollectWindow, DuetPart, GeneratorRule, RunAttempt, RunCollected, RunStage, StartedLoad } from '../run-stage.ts';
import { MATTERMOST_SERIES_QUERY, MattermostSeriesWatch } from '../../chat-servers/mattermost/licence.ts';
import type { AppNodes } from './app-nodes.ts';
import type { LoadAgents, RunningLoad } from './load-agents.ts';
import type { RunSnapshots } from './snapshots.ts';
import { InputError } from '../../util/errors.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { fetchCpuProfile } from './cpu-profile.ts';
import type { BenchNode, RemoteShell } from './remote-shell.ts';
import { goStoredProfile } from '../../chat-servers/mattermost/pprof.ts';

/** Go's profile handler refuses a duration beyond the listener's 300 s WriteTimeout (cpu-profile.ts). */
const MAX_PROFILE_SEC = 290;

/** What an AWS run uses of the bench; `report` carries what a run learns back to it. */
export interface AwsRunDeps extends Pick<RunStage, 'signal' | 'clock' | 'hints' | 'state'> {
  bench: AwsBenchDescription;
  progress: Progress;
  prometheus: PrometheusClient;
  appNodes: AppNodes;
  agents: LoadAgents;
  snapshots: RunSnapshots;
  fingerprint: BenchFingerprint;
  timing: { scrapeIntervalSec: number; rateWindowSec: number; watchIntervalSec: number };
  maxEngineCpuPercent: number;
  /** Logs in the dataset's admin and a user once Mattermost answers, before the first test (dataset-login.ts); returns notes. */
  checkAccounts?: () => Promise<string[]>;
  /** `profile: on`: the app nodes whose Mattermost CPU profile is fetched during the measured window, over this shell. */
  profile?: { shell: RemoteShell; nodes: readonly BenchNode[]; metricsPort: number };
  report: {
    /** A problem that ends the gate (the metrics node stopped answering). */
    broken(reason: string): void;
    /** A note for the report (a snapshot that could not be taken). */
    warning(note: string): void;
    /** The test itself took this long: the rest of the run was set-up and wind-down. */
    testSec(seconds: number): void;
  };
}

/**
 * One test run on the AWS bench, through the shared run sequence; `test` is the test as
 * the coordinator runs it. In a duet, `d` is the slot's (its app services, agent group and
 * Prometheus) and `duet` meets the other slot's run.
 */
export function executeAwsRun(d: AwsRunDeps, run: ScheduledRun, test: TestSpec, duet?: DuetPart): Promise<RunResult> {
  const stage: RunStage = {
    system: 'mattermost',
    progress: d.progress,
    signal: d.signal,
    clock: d.clock,
    hints: d.hints,
    state: d.state,
    scrapeIntervalSec: d.timing.scrapeIntervalSec,
    rateWindowSec: d.timing.rateWindowSec,
    attempt: () => new AwsAttempt(d, run, test, duet?.slot),
  };
  return executeRun(stage, run, duet);
}

/**
 * One run on a provisioned AWS bench: switch the app nodes to the side's Mattermost
 * (restoring the dataset), start the engine on the agents; an agent that stops answering
 * or an app node that drops out of Prometheus aborts the run. Afterwards the Mattermost
 * series are read and, where configured, a Grafana snapshot is linked.
 */
export class AwsAttempt implements RunAttempt {
  readonly generator: GeneratorRule;
  private versions = new Map<string, string>();
  private watcher?: ReturnType<typeof setInterval>;
  /** The app nodes' CPU profiles of the measured window, being fetched, or why there are none. */
  private profiling?: Promise<Buffer[] | string>;
  /** Ends a wait for the window when the run stops first. */
  private readonly stopped = new AbortController();

  constructor(
    private readonly d: AwsRunDeps,
    private readonly run: ScheduledRun,
    /** The test as the coordinator runs it (proxy checks off on a bench without a proxy). */
    readonly test: TestSpec,
    private readonly slot?: 'a' | 'b',
  ) {
    this.generator = awsGeneratorRule(d.maxEngineCpuPercent);
  }

  expandQuery(query: string): string {
    return query;
  }

  async start(abort: (reason: Error) => void): Promise<StartedLoad> {
    const { d } = this;
    const side = this.run.side;
    if (!side.releaseUrl || !side.configPatch) throw new Error(`${side.role} ${side.label}: no release URL or config patch (options were not parsed for the AWS bench)`);
    d.progress.info(`preparing the app nodes for Mattermost ${side.label}`);
    try {
      this.versions = await d.appNodes.prepare({ label: side.label, ...(side.build ? {} : { version: side.version }), releaseUrl: side.releaseUrl, configPatch: side.configPatch });
      for (const note of (await d.checkAccounts?.()) ?? []) d.progress.info(note);
    } catch (error) {
      // An unlicensed server, a refused admin or user (or another problem of the bench's inputs) stops the gate: no later run could be judged.
      if (error instanceof InputError) d.report.broken(error.message);
      throw error;
    }
    d.progress.info(`app nodes run ${[...this.versions].map(([n, v]) => `${n} ${v}`).join(', ')}`);
    d.progress.info(`${this.slot ? `slot ${this.slot}: ` : ''}starting ${d.bench.agents.engine} on ${d.agents.size} agent(s)`);
    const load = await d.agents.start(this.test);
    this.watch(load, abort);
    return { users: load.users, health: { query: (promql) => d.prometheus.queryNumber(promql) }, stats: () => load.stats() };
  }

  /**
   * Aborts the run when an agent stops answering or an app node's Mattermost disappears
   * from Prometheus (up == 0), naming it; two misses in a row, so one slow answer does
   * not end a run.
   */
  private watch(load: RunningLoad, abort: (reason: Error) => void): void {
    const { prometheus } = this.d;
    const misses = new Map<string, number>();
    let busy = false;
    const startedMs = Date.now();
    const series = new MattermostSeriesWatch(async () => (await prometheus.query(MATTERMOST_SERIES_QUERY))[0]?.value);
    this.watcher = setInterval(() => {
      if (busy) return;
      busy = true;
      void (async () => {
        const unlicensed = await series.check((Date.now() - startedMs) / 1000);
        if (unlicensed) return void abort(new Error(unlicensed));
        const seen: string[] = await load.check().catch((e: Error) => [`the agents: ${e.message}`]);
        const down = await prometheus.query('up{job="mattermost"} == 0').catch(() => []);
        for (const sample of down) seen.push(`${sample.labels.instance ?? 'an app node'}: Mattermost's metrics endpoint is down (up == 0)`);
        for (const key of [...misses.keys()]) if (!seen.includes(key)) misses.delete(key);
        for (const problem of seen) {
          const n = (misses.get(problem) ?? 0) + 1;
          misses.set(problem, n);
          if (n >= 2) abort(new Error(problem));
        }
      })().finally(() => {
        busy = false;
      });
    }, this.d.timing.watchIntervalSec * 1000);
  }

  /** A gate stopped from outside leaves nothing of the bench dead: the run was aborted. */
  alive(): boolean {
    return true;
  }

  /**
   * `profile: on`: Go's CPU profile of every app node over a bounded test's measured
   * window (after its ramp-up, up to the handler's limit), fetched while the load runs.
   * An unbounded test's window is known only afterwards, so it is not profiled here.
   */
  testStarted(): void {
    const profile = this.d.profile;
    if (!profile) return;
    const test = this.test;
    if (test.type !== 'bounded') {
      this.profiling = Promise.resolve('an unbounded test is not profiled on the AWS bench (its measured window is found only after the run)');
      return;
    }
    const seconds = Math.min(MAX_PROFILE_SEC, Math.floor(test.duration - test.rampUp));
    if (seconds < 1) return;
    const name = `${runId(this.run)}${this.slot ? `-${this.slot}` : ''}`;
    const fetchAll = async (): Promise<Buffer[]> => {
      await sleep(test.rampUp * 1000, undefined, { signal: AbortSignal.any([this.d.signal, this.stopped.signal]) });
      return Promise.all(profile.nodes.map((node) => fetchCpuProfile({ shell: profile.shell, node, name: `${name}-${node.name}`, seconds, metricsPort: profile.metricsPort })));
    };
    this.profiling = fetchAll().catch((error: Error) => `fetching the CPU profile failed: ${error.message}`);
  }

  /** The profile fetched during the window, stored as the run result's; a failure is a progress line, never a failed run. */
  private async storedProfile(stable: { startSec: number; endSec: number }): Promise<Pick<RunResult, 'profile'>> {
    const fetched = await this.profiling;
    if (fetched === undefined) return {};
    try {
      if (typeof fetched === 'string') throw new Error(fetched);
      return { profile: goStoredProfile(fetched, { windowSec: stable.endSec - stable.startSec }) };
    } catch (error) {
      this.d.progress.info(`no profile of ${runId(this.run)}: ${(error as Error).message}`);
      return {};
    }
  }

  testEnded(seconds: number): void {
    this.d.report.testSec(seconds);
  }

  async stop(): Promise<{ problems: string[] }> {
    clearInterval(this.watcher);
    this.stopped.abort(new Error('the run stopped before its measured window'));
    // Also after a failed start: an agent may have started before another failed.
    return { problems: (await this.d.agents.stop()).map((p) => `stopping the load: ${p}`) };
  }

  async collect(w: CollectWindow): Promise<RunCollected> {
    const { timing } = this.d;
    const collected = await mattermost.collect(this.d.prometheus, w, { rateWindowSec: timing.rateWindowSec, stepSec: timing.scrapeIntervalSec });
    // Without the metrics node no later run can be judged either: stop the gate.
    const unreachable = collected.problems.find((p) => p.includes('cannot reach Prometheus'));
    if (unreachable) this.d.report.broken(`the metrics node's Prometheus stopped answering: ${unreachable.split('\n')[0]}`);
    return collected;
  }

  /** Best effort: a missing snapshot is a warning in the report, not a failed run. */
  async extras(o: { stable: { startSec: number; endSec: number }; window: CollectWindow; ran: boolean }): Promise<Pick<RunResult, 'links' | 'profile'>> {
    if (!o.ran) return { links: [] };
    const profile = await this.storedProfile(o.stable);
    const shot = await this.d.snapshots.take(`${this.run.side.label} ${this.run.test.name} #${this.run.repeat + 1}${this.slot ? ` (slot ${this.slot})` : ''}`, new Date(o.window.runStart * 1000), new Date(o.window.runEnd * 1000));
    for (const w of shot.warnings) {
      this.d.report.warning(w);
      this.d.progress.problem(w, 'warning');
    }
    return { links: shot.link ? [shot.link] : [], ...profile };
  }

  describe(): { note: string; bench: BenchFingerprint } {
    const { side } = this.run;
    const { fingerprint } = this.d;
    const running = this.versions.get('app0');
    const overrides = side.sideOverrides.length ? `; ${side.role} config overrides: ${side.sideOverrides.map((x) => x.text).join(', ')}` : '';
    return {
      note: `AWS bench ${this.d.bench.benchName} run ${runId(this.run)}${this.slot ? ` in duet slot ${this.slot}` : ''}${overrides}`,
      bench: { ...fingerprint, versions: { ...fingerprint.versions, target: `Mattermost ${side.label}${running ? ` (${running})` : ''}` } },
    };
  }
}

/** The load agents must not be the bottleneck; their CPU is always scraped, so an unmeasured one is a problem. */
export function awsGeneratorRule(maxEngineCpuPercent: number): GeneratorRule {
  return {
    limitPercent: maxEngineCpuPercent,
    words: {
      unmeasured: 'the load agents\' CPU was not measured, so a saturated load generator cannot be ruled out',
      cpu: (max, limit) => `a load agent used up to ${max.toFixed(0)}% CPU (limit bench.aws.maxEngineCpuPercent = ${limit}%): the agents, not the target, were the bottleneck; add agents (bench.aws.agentCount) or lower usersPerAgent`,
      dropped: (n) => `the load engine dropped ${n} iterations: the agents could not keep up`,
      scriptErrors: (n) => `the k6 scenario threw ${n} errors on the agents; see journalctl -u loadgate-k6 on them`,
    },
  };
}
