import { z } from 'zod';
import type { GateConfig, HealthQuery, TestSpec } from '../../config/schema.ts';
import { CEILING_ACTION_FREQUENCIES, MATTERMOST_HEALTH_QUERIES } from '../../chat-servers/mattermost/defaults.ts';
import { InputError, formatIssuePath } from '../../util/errors.ts';
import { resourceIdSchema } from './schema.ts';
import { agentCreateRefusal, coordinatorCreateRefusal } from './rules.ts';
import { isSupportedLoadTestNgVersion, SUPPORTED_LOADTEST_NG_VERSIONS } from '../../config/engine-versions.ts';

/**
 * Builds load-test-ng's three config documents from a gate config:
 *
 * - `config.json` (`loadtest.Config`), one per agent;
 * - `simulcontroller.json` (`simulcontroller.Config`), the simulative controller's idle times;
 * - `coordinator.json` (`coordinator.Config`), the feedback loop and its health queries.
 *
 * Field names and validation rules follow load-test-ng's Go structs (loadtest/config.go,
 * loadtest/control/simulcontroller/config.go, coordinator/config.go, coordinator/cluster/config.go,
 * coordinator/performance/config.go). Anything load-test-ng itself would reject at create
 * time is rejected here first, with the gate-config field to change.
 */

export interface LoadTestConfig {
  ConnectionConfiguration: { ServerURL: string; WebSocketURL: string; AdminEmail: string; AdminPassword: string };
  UserControllerConfiguration: { Type: 'simulative'; RatesDistribution: { Rate: number; Percentage: number }[]; ServerVersion: string };
  InstanceConfiguration: {
    NumTeams: number;
    NumChannels: number;
    NumPosts: number;
    NumReactions: number;
    NumAdmins: number;
    PercentReplies: number;
    PercentRepliesInLongThreads: number;
    PercentUrgentPosts: number;
    PercentPublicChannels: number;
    PercentPrivateChannels: number;
    PercentDirectChannels: number;
    PercentGroupChannels: number;
  };
  UsersConfiguration: {
    UsersFilePath: string;
    InitialActiveUsers: number;
    MaxActiveUsers: number;
    AvgSessionsPerUser: number;
    PercentOfUsersAreAdmin: number;
  };
  LogSettings: LogSettings;
  /**
   * Validated by v1.29.0–v1.32.0 without defaults being filled in: leaving it out sends an
   * empty ConsoleLevel, refused with 400 "ConsoleLevel is not valid" (loadtest/config.go).
   * Newer releases drop the struct and ignore the key.
   */
  BrowserLogSettings: { EnableConsole: boolean; ConsoleLevel: string; EnableFile: boolean; FileLevel: string; FileLocation: string };
}

export interface SimulControllerConfig {
  MinIdleTimeMs: number;
  AvgIdleTimeMs: number;
  PercentUrgentPosts: number;
  PercentReplies: number;
}

export interface MonitorQuery {
  Description: string;
  Query: string;
  Threshold: number;
  MinIntervalSec: number;
  Alert: boolean;
}

export interface CoordinatorConfig {
  ClusterConfig: { Agents: { Id: string; ApiURL: string }[]; MaxActiveUsers: number };
  MonitorConfig: { PrometheusURL: string; UpdateIntervalMs: number; Queries: MonitorQuery[] };
  NumUsersInc: number;
  NumUsersDec: number;
  RestTimeSec: number;
  LogSettings: LogSettings;
}

interface LogSettings {
  EnableConsole: boolean;
  ConsoleLevel: string;
  ConsoleJson: boolean;
  EnableFile: boolean;
  FileLevel: string;
  FileJson: boolean;
  FileLocation: string;
}

/** Where things are on the bench: from Terraform outputs, so parsed here. */
const loadTestNgEndpointsSchema = z.strictObject({
  /** The URL agents load (the proxy when there is one), e.g. http://10.0.1.10. */
  serverUrl: z.url({ protocol: /^https?$/ }),
  /** Defaults to serverUrl with ws:// or wss://. */
  webSocketUrl: z.url({ protocol: /^wss?$/ }).optional(),
  prometheusUrl: z.url({ protocol: /^https?$/ }),
  agents: z.array(z.strictObject({ id: resourceIdSchema, apiUrl: z.url({ protocol: /^https?$/ }) })).min(1, 'at least one agent is needed'),
  /** The system admin load-test-ng logs in as to set the server up. A secret: never logged. */
  admin: z.strictObject({ email: z.string().min(3), password: z.string().min(1) }),
  /** Credentials file on the agents (the dataset's users), as in the seed's UsersFilePath. */
  usersFilePath: z.string().default(''),
});

/**
 * coordinator/performance/config.go: UpdateIntervalMs is deprecated, ignored and always
 * 1000 ms; any other value only logs a warning. Sent as 1000 so the config says what runs.
 */
const UPDATE_INTERVAL_MS = 1000;
export type LoadTestNgEndpoints = z.input<typeof loadTestNgEndpointsSchema>;

export interface LoadTestNgConfigs {
  loadTest: LoadTestConfig;
  simulController: SimulControllerConfig;
  coordinator: CoordinatorConfig;
}

/** Health queries for bounded tests: watched and graphed, but never alerting. */
const BOUNDED_MONITOR_QUERIES: readonly HealthQuery[] = MATTERMOST_HEALTH_QUERIES;

export function buildLoadTestNgConfigs(config: GateConfig, test: TestSpec, endpointsInput: LoadTestNgEndpoints): LoadTestNgConfigs {
  const endpoints = parseEndpoints(endpointsInput);
  const problems = configProblems(config, test, endpoints.agents.length);
  if (problems.length) throw new InputError(`the gate config cannot be run with load-test-ng:\n${problems.join('\n')}`, problems);
  const { idle } = config.engine;
  const simulController: SimulControllerConfig = {
    MinIdleTimeMs: idle.minimumMs,
    AvgIdleTimeMs: idle.averageMs,
    PercentUrgentPosts: 0.001,
    PercentReplies: 0.18,
  };
  const configs = { loadTest: loadTestConfig(config, endpoints), simulController, coordinator: coordinatorConfig(test, endpoints) };
  selfCheck(configs, config.engine.version);
  return configs;
}

type Endpoints = ReturnType<typeof parseEndpoints>;

/** The users one test asks of the whole cluster: an unbounded test's cap, a bounded one's load. */
function clusterUsersOf(test: TestSpec): number {
  return test.type === 'unbounded' ? test.maxUsers : test.users;
}

/** What load-test-ng would refuse, or cannot do, in this gate config, each naming the field to change. */
/**
 * What load-test-ng would refuse in the config on `agents` agents (per side in a duet), over
 * every test: the run checks each test only as it starts it, after provisioning.
 */
export function loadTestNgProblems(config: GateConfig, agents: number): string[] {
  return [...new Set(config.tests.flatMap((test) => configProblems(config, test, agents)))];
}

function configProblems(config: GateConfig, test: TestSpec, agents: number): string[] {
  const problems: string[] = [];
  const { idle, actions } = config.engine;

  if (actions && !sameFrequencies(actions, CEILING_ACTION_FREQUENCIES)) {
    problems.push(
      'engine.actions: load-test-ng has its action frequencies built in (simulcontroller) and cannot take others; remove engine.actions or use engine.kind: k6',
    );
  }
  // simulcontroller: AvgIdleTimeMs validate:"range:($MinIdleTimeMs,]".
  if (idle.averageMs <= idle.minimumMs) problems.push('engine.idle.averageMs: must be greater than engine.idle.minimumMs (load-test-ng rule)');

  const usersPerAgent = config.bench.aws.usersPerAgent;
  const clusterUsers = clusterUsersOf(test);
  const capacity = usersPerAgent * agents;
  if (capacity < clusterUsers) {
    problems.push(
      `bench.aws.usersPerAgent: ${agents} agent(s) x ${usersPerAgent} users = ${capacity}, fewer than the ${clusterUsers} users of test "${test.name}"; add agents (bench.aws.agentCount) or raise usersPerAgent`,
    );
  }

  // coordinator/config.go IsValid: RestTimeSec*1000 < MonitorConfig.UpdateIntervalMs is refused.
  if (stepping(test).restTimeSec * 1000 < UPDATE_INTERVAL_MS)
    problems.push(`tests: "${test.name}" restTime must be at least ${UPDATE_INTERVAL_MS / 1000}s (load-test-ng RestTimeSec*1000 >= UpdateIntervalMs)`);
  if (!isSupportedLoadTestNgVersion(config.engine.version)) {
    problems.push(
      `engine.version: "${config.engine.version}" is not a load-test-ng release loadgate supports; use one of ${SUPPORTED_LOADTEST_NG_VERSIONS.join(', ')}`,
    );
  }
  return problems;
}

function logSettings(file: string): LogSettings {
  return {
    EnableConsole: true,
    ConsoleLevel: 'ERROR',
    ConsoleJson: false,
    EnableFile: true,
    FileLevel: 'INFO',
    FileJson: true,
    FileLocation: file,
  };
}

/** `config.json`, one per agent: where the server is, the users' rate and how many each agent runs. */
function loadTestConfig(config: GateConfig, endpoints: Endpoints): LoadTestConfig {
  return {
    ConnectionConfiguration: {
      ServerURL: endpoints.serverUrl,
      WebSocketURL: endpoints.webSocketUrl,
      AdminEmail: endpoints.admin.email,
      AdminPassword: endpoints.admin.password,
    },
    UserControllerConfiguration: {
      Type: 'simulative',
      // One rate for every user: the seed's `RatesDistribution [{Rate: 5.4, Percentage: 1}]`.
      RatesDistribution: [{ Rate: config.engine.idle.rateMultiplier, Percentage: 1 }],
      ServerVersion: '',
    },
    // Only used when generating data; load-test-ng still validates that channel percentages sum to 1.
    InstanceConfiguration: {
      NumTeams: 2,
      NumChannels: 10,
      NumPosts: 0,
      NumReactions: 0,
      NumAdmins: 0,
      PercentReplies: 0.5,
      PercentRepliesInLongThreads: 0.05,
      PercentUrgentPosts: 0.001,
      PercentPublicChannels: 0.2,
      PercentPrivateChannels: 0.1,
      PercentDirectChannels: 0.6,
      PercentGroupChannels: 0.1,
    },
    UsersConfiguration: {
      UsersFilePath: endpoints.usersFilePath,
      InitialActiveUsers: 0,
      MaxActiveUsers: config.bench.aws.usersPerAgent,
      AvgSessionsPerUser: 1,
      PercentOfUsersAreAdmin: 0,
    },
    LogSettings: logSettings('ltagent.log'),
    BrowserLogSettings: { EnableConsole: false, ConsoleLevel: 'error', EnableFile: false, FileLevel: 'error', FileLocation: 'browseragent.log' },
  };
}

/** `coordinator.json`: the agents, the step and the health queries (alerting only for an unbounded test). */
function coordinatorConfig(test: TestSpec, endpoints: Endpoints): CoordinatorConfig {
  const step = stepping(test);
  const queries = test.type === 'unbounded' ? test.health.map((q) => monitorQuery(q, q.enabled)) : BOUNDED_MONITOR_QUERIES.map((q) => monitorQuery(q, false));
  return {
    ClusterConfig: {
      Agents: endpoints.agents.map((a) => ({ Id: a.id, ApiURL: a.apiUrl })),
      MaxActiveUsers: clusterUsersOf(test),
    },
    MonitorConfig: { PrometheusURL: endpoints.prometheusUrl, UpdateIntervalMs: UPDATE_INTERVAL_MS, Queries: queries },
    NumUsersInc: step.inc,
    NumUsersDec: step.dec,
    RestTimeSec: step.restTimeSec,
    LogSettings: logSettings('ltcoordinator.log'),
  };
}

/**
 * What the pinned release's agent and coordinator would answer at create time, asked before
 * any agent is: a refusal here is a loadgate bug or an unsupported setting, named as such.
 */
function selfCheck(configs: LoadTestNgConfigs, version: string): void {
  if (!isSupportedLoadTestNgVersion(version)) return;
  const refusals = [
    agentCreateRefusal({ LoadTestConfig: configs.loadTest, SimulControllerConfig: configs.simulController }, version, 'lt0'),
    coordinatorCreateRefusal({ CoordinatorConfig: configs.coordinator, LoadTestConfig: configs.loadTest }, version, 'coord'),
  ].flatMap((r) => (r ? [r.error] : []));
  if (refusals.length) throw new InputError(`load-test-ng ${version} would refuse this config:\n${refusals.join('\n')}`, refusals);
}

/**
 * Unbounded: the test's own step. Bounded: the coordinator with no alerting query ramps
 * up to `users` and holds; the step is sized so the ramp takes `rampUp`.
 */
function stepping(test: TestSpec): { inc: number; dec: number; restTimeSec: number } {
  if (test.type === 'unbounded') return { inc: test.usersIncrement, dec: test.usersDecrement, restTimeSec: test.restTime };
  const restTimeSec = 2;
  const steps = Math.max(1, Math.floor(test.rampUp / restTimeSec));
  const inc = Math.max(1, Math.ceil(test.users / steps));
  return { inc, dec: inc, restTimeSec };
}

function monitorQuery(q: HealthQuery, alert: boolean): MonitorQuery {
  return { Description: q.name, Query: q.query, Threshold: q.threshold, MinIntervalSec: q.minInterval, Alert: alert };
}

function sameFrequencies(a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) if ((a[key] ?? 0) !== (b[key] ?? 0)) return false;
  return true;
}

function parseEndpoints(input: LoadTestNgEndpoints) {
  const result = loadTestNgEndpointsSchema.safeParse(input);
  if (!result.success) {
    // Never echo values: `admin.password` is among them.
    const lines = result.error.issues.map((i) => `load-test-ng endpoints ${formatIssuePath(i.path)}: ${i.message}`);
    throw new InputError(`the bench description is not usable for load-test-ng:\n${lines.join('\n')}`, lines);
  }
  const ids = new Set<string>();
  for (const agent of result.data.agents) {
    if (ids.has(agent.id)) throw new InputError(`load-test-ng endpoints agents: id "${agent.id}" is used twice; give each agent its own id`);
    ids.add(agent.id);
  }
  const serverUrl = result.data.serverUrl.replace(/\/+$/, '');
  const webSocketUrl = (result.data.webSocketUrl ?? serverUrl.replace(/^http/, 'ws')).replace(/\/+$/, '');
  return { ...result.data, serverUrl, webSocketUrl };
}
