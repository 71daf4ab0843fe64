import { join } from 'node:path';
import type { Progress } from '../progress.ts';
import type { AwsBenchDescription } from '../../aws/terraform-outputs.ts';
import type { TestSpec } from '../../config/schema.ts';
import type { ChatServer, NodesServer, Profiler, ProfileTarget, SlotProfile } from '../../chat-servers/chat-server.ts';
import type { PrometheusClient } from '../../metrics/prometheus.ts';
import type { BenchFingerprint, RunResult } from '../../results/schema.ts';
import { runId, type ScheduledRun } from '../gate-plan.ts';
import { executeRun } from '../run-sequence.ts';
import type { CollectWindow, DuetPart, GeneratorRule, RunAttempt, RunCollected, RunStage, StartedLoad } from '../run-stage.ts';
import type { AppNodes } from './app-nodes.ts';
import type { LoadAgents, RunningLoad } from './load-agents.ts';
import type { RunSnapshots } from './snapshots.ts';
import { InputError } from '../../util/errors.ts';

/** What an AWS run uses of the bench; `report` carries what a run learns back to it. */
export interface AwsRunDeps extends Pick<RunStage, 'signal' | 'clock' | 'hints' | 'state'> {
  /** The chat server the nodes run, with its `nodes` capability. */
  server: ChatServer & { nodes: NodesServer };
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
  /**
   * `profile: on`: the server's profiler, attached to the slot when its test starts, with
   * the bench's continuous profiler (the metrics node's Pyroscope) and a scratch directory
   * for each run's files.
   */
  profile?: { profiler: Profiler; continuous: NonNullable<ProfileTarget['continuous']>; dir: string };
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
    system: d.server.system,
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
  private slotProfile?: SlotProfile;

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
    if (!side.releaseUrl || !side.configPatch)
      throw new Error(`${side.role} ${side.label}: no release URL or config patch (options were not parsed for the AWS bench)`);
    d.progress.info(`preparing the app nodes for Mattermost ${side.label}`);
    try {
      this.versions = await d.appNodes.prepare({
        label: side.label,
        ...(side.build ? {} : { version: side.version }),
        releaseUrl: side.releaseUrl,
        configPatch: side.configPatch,
      });
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
    const series = this.d.server.nodes.runWatch(async (promql) => (await prometheus.query(promql))[0]?.value);
    this.watcher = setInterval(() => {
      if (busy) return;
      busy = true;
      void (async () => {
        const stop = await series.check((Date.now() - startedMs) / 1000);
        if (stop) return void abort(new Error(stop));
        const seen: string[] = await load.check().catch((e: Error) => [`the agents: ${e.message}`]);
        const { displayName, nodes } = this.d.server;
        const down = await prometheus.query(`up{job="${nodes.job}"} == 0`).catch(() => []);
        for (const sample of down) seen.push(`${sample.labels.instance ?? 'an app node'}: ${displayName}'s metrics endpoint is down (up == 0)`);
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
   * `profile: on`: the slot's CPU profile over the measured window, bounded or unbounded,
   * read once the run is over. A failure is a note in the report and a progress line,
   * never a failed run: the gate judges without the explanation.
   */
  private async storedProfile(window: CollectWindow): Promise<Pick<RunResult, 'profile'>> {
    if (!this.slotProfile || !(window.stableEnd > window.stableStart)) return {};
    const profile = await this.slotProfile.profile({ startSec: window.stableStart, endSec: window.stableEnd }).catch((error: Error) => error.message);
    if (typeof profile !== 'string') return { profile };
    const note = `No CPU profile of ${runId(this.run)}${this.slot ? ` (slot ${this.slot})` : ''}: ${profile}`;
    this.d.progress.problem(note, 'warning');
    this.d.report.warning(note);
    return {};
  }

  /** `profile: on`: the profiler attaches to this slot as its test starts (one that reads a continuous profiler only notes the slot). */
  testStarted(): void {
    const p = this.d.profile;
    if (!p) return;
    const name = `${runId(this.run)}${this.slot ? `-${this.slot}` : ''}`;
    this.slotProfile = p.profiler.attach({ ...(this.slot ? { slot: this.slot } : {}), continuous: p.continuous, dir: join(p.dir, name) });
  }

  testEnded(seconds: number): void {
    this.d.report.testSec(seconds);
  }

  async stop(): Promise<{ problems: string[] }> {
    clearInterval(this.watcher);
    // Also after a failed start: an agent may have started before another failed.
    const problems = (await this.d.agents.stop()).map((p) => `stopping the load: ${p}`);
    await this.slotProfile?.stop().catch((error: Error) => problems.push(`stopping the profiler: ${error.message}`));
    return { problems };
  }

  async collect(w: CollectWindow): Promise<RunCollected> {
    const { timing } = this.d;
    const collected = await this.d.server.collect(this.d.prometheus, w, { rateWindowSec: timing.rateWindowSec, stepSec: timing.scrapeIntervalSec });
    // Without the metrics node no later run can be judged either: stop the gate.
    const unreachable = collected.problems.find((p) => p.includes('cannot reach Prometheus'));
    if (unreachable) this.d.report.broken(`the metrics node's Prometheus stopped answering: ${unreachable.split('\n')[0]}`);
    return collected;
  }

  /** Best effort: a missing snapshot is a warning in the report, not a failed run. */
  async extras(o: { stable: { startSec: number; endSec: number }; window: CollectWindow; ran: boolean }): Promise<Pick<RunResult, 'links' | 'profile'>> {
    if (!o.ran) return { links: [] };
    const profile = await this.storedProfile(o.window);
    const shot = await this.d.snapshots.take(
      `${this.run.side.label} ${this.run.test.name} #${this.run.repeat + 1}${this.slot ? ` (slot ${this.slot})` : ''}`,
      new Date(o.window.runStart * 1000),
      new Date(o.window.runEnd * 1000),
    );
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
      bench: { ...fingerprint, versions: { ...fingerprint.versions, target: `${this.d.server.displayName} ${side.label}${running ? ` (${running})` : ''}` } },
    };
  }
}

/** The load agents must not be the bottleneck; their CPU is always scraped, so an unmeasured one is a problem. */
export function awsGeneratorRule(maxEngineCpuPercent: number): GeneratorRule {
  return {
    limitPercent: maxEngineCpuPercent,
    words: {
      unmeasured: "the load agents' CPU was not measured, so a saturated load generator cannot be ruled out",
      cpu: (max, limit) =>
        `a load agent used up to ${max.toFixed(0)}% CPU (limit bench.aws.maxEngineCpuPercent = ${limit}%): the agents, not the target, were the bottleneck; add agents (bench.aws.agentCount) or lower usersPerAgent`,
      dropped: (n) => `the load engine dropped ${n} iterations: the agents could not keep up`,
      scriptErrors: (n) => `the k6 scenario threw ${n} errors on the agents; see journalctl -u loadgate-k6 on them`,
    },
  };
}
