import { readFile } from 'node:fs/promises';
import { basename, isAbsolute, join, resolve } from 'node:path';
import type { GateConfig, TestSpec } from '../../config/schema.ts';
import { K6Api } from '../../engine/k6/api.ts';
import { readClientMetrics, totalErrors } from '../../engine/k6/client-metrics.ts';
import { MATTERMOST_SCENARIO_FILES, SCENARIOS_DIR, scenarioEnvironment } from '../../engine/k6/runner.ts';
import { AgentClient } from '../../engine/loadtest-ng/agent-client.ts';
import { buildLoadTestNgConfigs } from '../../engine/loadtest-ng/config.ts';
import type { AwsBenchDescription } from '../../aws/terraform-outputs.ts';
import { InputError } from '../../util/errors.ts';
import {
  K6AgentUsers,
  LoadTestNgAgentUsers,
  loadTestNgUserProblems,
  loadTestNgUsersFile,
  MultiAgentUsers,
  partitionUsers,
  perAgentMax,
  type AgentUsers,
} from './agent-users.ts';
import { runOnNodes, type BenchNode, type RemoteShell } from './remote-shell.ts';
import { startK6Script, stopK6Script, uploadScripts } from './scripts.ts';

/**
 * The load agents of the AWS bench, one interface for both engines: upload what every
 * run needs once, start the engine for a run, hand the coordinator a UserControl over
 * every agent, read the engine's own health, stop it. k6 runs with the
 * externally-controlled executor behind its REST API; load-test-ng agents are driven
 * through their agent API. Both APIs are reachable from the controller only.
 */

/** On agents, relative to the helpers' home (/var/lib/loadgate). */
const USERS_FILE = 'users.txt';
const SCENARIO_DIR = 'scenarios';

export interface EngineStats {
  scriptErrors: number;
  droppedIterations: number;
  requests: number;
  errors: number;
}

export interface RunningLoad {
  users: MultiAgentUsers;
  /** Per-agent problems (not answering, stopped) seen by a health check; empty when all is well. */
  check(): Promise<string[]>;
  stats(): Promise<EngineStats | undefined>;
}

export interface LoadAgents {
  readonly engine: 'k6' | 'load-test-ng';
  /** How many agents this drives (a duet slot's group, or every agent). */
  readonly size: number;
  /** Uploads the users file (and the scenario): once per gate, skipped when unchanged. */
  prepare(usersFile: string): Promise<void>;
  start(test: TestSpec): Promise<RunningLoad>;
  /** Stops the engine on every agent; safe when nothing runs. Returns problems. */
  stop(): Promise<string[]>;
}

export interface LoadAgentsOptions {
  config: GateConfig;
  configDir: string;
  bench: AwsBenchDescription;
  shell: RemoteShell;
  /** Base URL the controller uses for an agent's API (identity on AWS: http://<public ip>:<port>). */
  endpoint: (host: string, port: number) => string;
  /** How long k6 may take to initialise its VUs. */
  readyTimeoutSec: number;
  /** Extra scenario environment (LOADGATE_*), e.g. search terms. */
  scenarioEnv?: Record<string, string>;
  /** load-test-ng's admin login (secret): from the environment, never logged. */
  admin?: { email: string; password: string };
  sleep?: (ms: number) => Promise<void>;
  /**
   * A duet slot's agent group: only these agents (by index in the bench description),
   * loading this entry point and reporting to this Prometheus. Unset: every agent, the
   * bench's proxy and Prometheus.
   */
  group?: { agentIndices: readonly number[]; proxyUrl: string; prometheusUrl: string };
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function agentNodes(bench: AwsBenchDescription): BenchNode[] {
  return bench.agents.instanceIds.map((id, i) => ({ id, name: `agent${i}` }));
}

/** One agent this LoadAgents drives: its node and its public address. */
interface Agent {
  node: BenchNode;
  publicIp: string;
}

function groupAgents(o: LoadAgentsOptions): Agent[] {
  const all = agentNodes(o.bench);
  const indices = o.group?.agentIndices ?? all.map((_, i) => i);
  return indices.map((i) => {
    const node = all[i];
    const publicIp = o.bench.agents.publicIps[i];
    if (!node || !publicIp) throw new Error(`agent ${i} is not in the bench description`);
    return { node, publicIp };
  });
}

async function upload(shell: RemoteShell, nodes: BenchNode[], path: string, content: Buffer, what: string): Promise<void> {
  for (const script of uploadScripts(path, content)) await runOnNodes(shell, nodes, script, `upload ${what}`, { timeoutSec: 120 });
}

const plainUsersFile = (slice: readonly string[]): string => (slice.length ? `${slice.join('\n')}\n` : '');

/**
 * Gives every agent its own slice of the users file (partitionUsers), written as the
 * engine reads it; returns the slice sizes.
 */
async function uploadUserSlices(
  shell: RemoteShell,
  nodes: BenchNode[],
  text: string,
  usersFile: string,
  fileOf: (slice: readonly string[]) => string = plainUsersFile,
): Promise<number[]> {
  const slices = partitionUsers(text, nodes.length);
  for (const [i, node] of nodes.entries()) {
    await upload(shell, [node], USERS_FILE, Buffer.from(fileOf(slices[i] as string[])), `${node.name}'s slice of the users file ${basename(usersFile)}`);
  }
  return slices.map((s) => s.length);
}

/** Refuses a test with more users per agent than an agent's slice holds: they would share accounts. */
function checkSlices(sizes: readonly number[], perAgent: number, test: TestSpec): void {
  const smallest = Math.min(...sizes);
  if (sizes.length && smallest < perAgent) {
    throw new InputError(
      `--users-file: ${sizes.reduce((a, b) => a + b, 0)} users split over ${sizes.length} agent(s) leave ${smallest} for some agent, but test "${test.name}" runs up to ${perAgent} per agent; ` +
        "each simulated user needs its own account: add users to the file or lower the test's users",
    );
  }
}

export function createLoadAgents(o: LoadAgentsOptions): LoadAgents {
  return o.bench.agents.engine === 'k6' ? new K6Agents(o) : new LoadTestNgAgents(o);
}

class K6Agents implements LoadAgents {
  readonly engine = 'k6' as const;
  private readonly agents: Agent[];
  private readonly nodes: BenchNode[];
  get size(): number {
    return this.nodes.length;
  }
  private scenario = `${SCENARIO_DIR}/mattermost.js`;
  private sliceSizes: number[] = [];

  constructor(private readonly o: LoadAgentsOptions) {
    this.agents = groupAgents(o);
    this.nodes = this.agents.map((a) => a.node);
  }

  async prepare(usersFile: string): Promise<void> {
    this.sliceSizes = await uploadUserSlices(this.o.shell, this.nodes, await readFile(usersFile, 'utf8'), usersFile);
    // The Mattermost scenario and the metrics library it imports; a custom scenario
    // (engine.scenario) goes beside them, so its `./lib/metrics.js` import resolves too.
    for (const file of MATTERMOST_SCENARIO_FILES) {
      await upload(this.o.shell, this.nodes, `${SCENARIO_DIR}/${file}`, await readFile(join(SCENARIOS_DIR, file)), `the k6 scenario ${file}`);
    }
    const custom = this.o.config.engine.scenario;
    if (custom) {
      const path = isAbsolute(custom) ? custom : resolve(this.o.configDir, custom);
      this.scenario = `${SCENARIO_DIR}/custom-${basename(path).replace(/[^A-Za-z0-9._-]/g, '_')}`;
      await upload(this.o.shell, this.nodes, this.scenario, await readFile(path), `the k6 scenario ${basename(path)}`);
    }
  }

  async start(test: TestSpec): Promise<RunningLoad> {
    const { o, nodes } = this;
    const maxUsers = test.type === 'bounded' ? test.users : test.maxUsers;
    const perAgent = perAgentMax(maxUsers, nodes.length);
    checkSlices(this.sliceSizes, perAgent, test);
    const maxDurationSec = (test.type === 'bounded' ? test.duration : test.maxDuration) + 300;
    const env = scenarioEnvironment({
      baseUrl: o.group?.proxyUrl ?? o.bench.proxy.url,
      // k6 resolves open() paths from the script: scenarios/x.js → ../users.txt.
      usersFile: `../${USERS_FILE}`,
      actions: o.config.engine.actions,
      idle: o.config.engine.idle,
      maxUsers: perAgent,
      initialUsers: 0,
      maxDurationSec,
      requestTimeoutMs: 10_000,
      env: o.scenarioEnv ?? {},
    });
    await runOnNodes(o.shell, nodes, startK6Script(this.scenario, env), 'start k6 on the agents', { timeoutSec: 120 });
    const apis = this.agents.map((a) => new K6Api({ ...hostPort(o.endpoint(a.publicIp, o.bench.agents.apiPort)), timeoutMs: 10_000 }));
    await Promise.all(apis.map((api, i) => waitForK6(api, perAgent, nodes[i]!.name, o.readyTimeoutSec, o.sleep ?? defaultSleep)));
    const agents: AgentUsers[] = apis.map((api, i) => new K6AgentUsers(nodes[i]!.name, api, perAgent));
    return {
      users: new MultiAgentUsers(agents),
      async check() {
        const states = await Promise.all(
          apis.map((api) =>
            api.status().then(
              (s) => (s.running ? undefined : `k6 is ${s.phase}`),
              (e: Error) => e.message,
            ),
          ),
        );
        return states.flatMap((state, i) => (state ? [`${nodes[i]?.name} (${nodes[i]?.id}): ${state}`] : []));
      },
      async stats() {
        const all = await Promise.all(apis.map((api) => api.metrics().then(readClientMetrics)));
        return all.reduce<EngineStats>(
          (sum, m) => ({
            scriptErrors: sum.scriptErrors + m.scriptErrors,
            droppedIterations: sum.droppedIterations + m.droppedIterations,
            requests: sum.requests + m.requests,
            errors: sum.errors + totalErrors(m),
          }),
          { scriptErrors: 0, droppedIterations: 0, requests: 0, errors: 0 },
        );
      },
    };
  }

  async stop(): Promise<string[]> {
    try {
      await runOnNodes(this.o.shell, this.nodes, stopK6Script(), 'stop k6 on the agents', { timeoutSec: 120 });
      return [];
    } catch (error) {
      return [(error as Error).message];
    }
  }
}

/** "http://203.0.113.7:6565" → the K6Api's host and port. */
function hostPort(baseUrl: string): { host: string; port: number } {
  const url = new URL(baseUrl);
  return { host: url.hostname, port: Number(url.port || 80) };
}

/** Until k6 runs its executor with `maxUsers` VUs initialised (so it is this run's k6). */
async function waitForK6(api: K6Api, maxUsers: number, name: string, timeoutSec: number, sleep: (ms: number) => Promise<void>): Promise<void> {
  const deadline = Date.now() + timeoutSec * 1000;
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    try {
      const status = await api.status();
      last = `phase ${status.phase}, ${status.vusMax}/${maxUsers} users initialised`;
      if (status.running && status.phase === 'running' && status.vusMax === maxUsers) return;
    } catch (error) {
      last = (error as Error).message;
    }
    await sleep(500);
  }
  throw new Error(`k6 on ${name} (${api.baseUrl}) did not start within ${timeoutSec} s: ${last}`);
}

class LoadTestNgAgents implements LoadAgents {
  readonly engine = 'load-test-ng' as const;
  private readonly agents: Agent[];
  private readonly nodes: BenchNode[];
  get size(): number {
    return this.nodes.length;
  }
  private clients: AgentClient[] = [];
  private sliceSizes: number[] = [];

  constructor(private readonly o: LoadAgentsOptions) {
    this.agents = groupAgents(o);
    this.nodes = this.agents.map((a) => a.node);
    if (!o.admin) {
      throw new InputError(
        "engine.kind load-test-ng: its agents log in a system admin to set the server up; set LOADGATE_ADMIN_EMAIL and LOADGATE_ADMIN_PASSWORD (the dataset's admin)",
      );
    }
  }

  async prepare(usersFile: string): Promise<void> {
    const text = await readFile(usersFile, 'utf8');
    const problems = loadTestNgUserProblems(text);
    if (problems.length) {
      const shown = problems.slice(0, 5).concat(problems.length > 5 ? [`... and ${problems.length - 5} more`] : []);
      throw new InputError(
        `--users-file: ${basename(usersFile)} is not a load-test-ng users file ("email password" per line, split on one space; api/agent.go getUserCredentials):\n${shown.join('\n')}`,
        problems,
      );
    }
    this.sliceSizes = await uploadUserSlices(this.o.shell, this.nodes, text, usersFile, loadTestNgUsersFile);
  }

  async start(test: TestSpec): Promise<RunningLoad> {
    const { o, nodes } = this;
    const maxUsers = test.type === 'bounded' ? test.users : test.maxUsers;
    const perAgent = perAgentMax(maxUsers, nodes.length);
    checkSlices(this.sliceSizes, perAgent, test);
    const apiUrl = (i: number) => o.endpoint(this.agents[i]!.publicIp, o.bench.agents.apiPort);
    // Destroyed after every run (stop()), so the same ids serve every run.
    const ids = nodes.map((n) => `lg${n.name}`);
    const configs = buildLoadTestNgConfigs(o.config, test, {
      serverUrl: o.group?.proxyUrl ?? o.bench.proxy.url,
      prometheusUrl: o.group?.prometheusUrl ?? o.bench.metrics.prometheusUrl,
      agents: nodes.map((n, i) => ({ id: n.name, apiUrl: apiUrl(i) })),
      admin: o.admin as { email: string; password: string },
      usersFilePath: `/var/lib/loadgate/${USERS_FILE}`,
    });
    const loadTest = { ...configs.loadTest, UsersConfiguration: { ...configs.loadTest.UsersConfiguration, MaxActiveUsers: perAgent } };
    this.clients = nodes.map((_, i) => new AgentClient(ids[i] as string, { baseUrl: apiUrl(i), timeoutMs: 120_000 }));
    for (const client of this.clients) {
      await client.create(loadTest, configs.simulController);
      await client.run();
    }
    const clients = this.clients;
    return {
      users: new MultiAgentUsers(clients.map((c, i) => new LoadTestNgAgentUsers(nodes[i]!.name, c, perAgent))),
      async check() {
        const states = await Promise.all(
          clients.map((c) =>
            c.status().then(
              (s) => (s.State === 'running' ? undefined : `load-test-ng agent is ${s.State}`),
              (e: Error) => e.message,
            ),
          ),
        );
        return states.flatMap((state, i) => (state ? [`${nodes[i]?.name} (${nodes[i]?.id}): ${state}`] : []));
      },
      // load-test-ng reports no script errors or dropped iterations; its client metrics are in Prometheus.
      async stats() {
        return undefined;
      },
    };
  }

  async stop(): Promise<string[]> {
    const problems: string[] = [];
    for (const client of this.clients) {
      await client.destroy().catch((error: Error) => problems.push(`agent ${client.id}: ${error.message}`));
    }
    this.clients = [];
    return problems;
  }
}
