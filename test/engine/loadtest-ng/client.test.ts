import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { AgentClient } from '../../../src/engine/loadtest-ng/agent-client.ts';
import { CoordinatorClient } from '../../support/loadtest-ng/coordinator-client.ts';
import { firstJsonValue, LoadTestNgError } from '../../../src/engine/loadtest-ng/http.ts';
import { agentResponseSchema, coordinatorResponseSchema } from '../../../src/engine/loadtest-ng/schema.ts';
import { waitForCoordinator } from '../../support/loadtest-ng/wait.ts';
import type { LoadTestConfig, SimulControllerConfig, CoordinatorConfig } from '../../../src/engine/loadtest-ng/config.ts';
import { LoadTestNgStandIn, fixture } from './stand-in.ts';
import { readdirSync } from 'node:fs';

const standIn = new LoadTestNgStandIn();
let baseUrl = '';
before(async () => {
  baseUrl = await standIn.start();
});
after(async () => {
  await standIn.stop();
});

function loadTestConfig(maxUsers: number): LoadTestConfig {
  return {
    ConnectionConfiguration: { ServerURL: 'http://127.0.0.1:9', WebSocketURL: 'ws://127.0.0.1:9', AdminEmail: 'admin@example.com', AdminPassword: 'x' },
    UserControllerConfiguration: { Type: 'simulative', RatesDistribution: [{ Rate: 5.4, Percentage: 1 }], ServerVersion: '' },
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
    UsersConfiguration: { UsersFilePath: '', InitialActiveUsers: 0, MaxActiveUsers: maxUsers, AvgSessionsPerUser: 1, PercentOfUsersAreAdmin: 0 },
    LogSettings: {
      EnableConsole: true,
      ConsoleLevel: 'ERROR',
      ConsoleJson: false,
      EnableFile: false,
      FileLevel: 'INFO',
      FileJson: true,
      FileLocation: 'x.log',
    },
    BrowserLogSettings: { EnableConsole: false, ConsoleLevel: 'error', EnableFile: false, FileLevel: 'error', FileLocation: 'b.log' },
  };
}
const simul: SimulControllerConfig = { MinIdleTimeMs: 1000, AvgIdleTimeMs: 20000, PercentUrgentPosts: 0.001, PercentReplies: 0.18 };

test('every recorded fixture parses with the response schemas', () => {
  const dir = new URL('../../fixtures/loadtest-ng/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  assert.ok(files.length >= 20);
  for (const file of files) {
    const schema = file.startsWith('agent') ? agentResponseSchema : coordinatorResponseSchema;
    const parsed = schema.safeParse(fixture(file));
    assert.ok(parsed.success, `${file}: ${parsed.success ? '' : parsed.error.message}`);
  }
  // Extra keys from newer releases are dropped, not rejected.
  const running = coordinatorResponseSchema.parse(fixture('coordinator-status-running-200.json'));
  assert.deepEqual(Object.keys(running.status ?? {}).sort(), ['ActiveUsers', 'NumErrors', 'StartTime', 'State', 'StopTime', 'SupportedUsers']);
});

test('agent lifecycle: create, run, add and remove users, status, stop, destroy', async () => {
  const agent = new AgentClient('lt0', { baseUrl });
  const created = await agent.create(loadTestConfig(20), simul);
  assert.equal(created.State, 'stopped');
  const createReq = standIn.requests.at(-1)!;
  assert.equal(createReq.url, '/loadagent/create?id=lt0');
  assert.deepEqual(Object.keys(createReq.body as object), ['LoadTestConfig', 'SimulControllerConfig']);

  assert.equal((await agent.run()).State, 'running');
  const added = await agent.addUsers(8);
  assert.deepEqual({ changed: added.changed, users: added.status.NumUsers, error: added.error }, { changed: 8, users: 8, error: undefined });
  assert.equal(standIn.requests.at(-1)!.url, '/loadagent/lt0/addusers?amount=8');

  // Past MaxActiveUsers the agent adds what fits and reports the error with a 200.
  const partial = await agent.addUsers(16);
  assert.equal(partial.changed, 12);
  assert.equal(partial.status.NumUsers, 20);
  assert.equal(partial.error, 'Max active users limit reached');

  const removed = await agent.removeUsers(5);
  assert.equal(removed.changed, 5);
  assert.equal((await agent.status()).NumUsers, 15);
  const stopped = await agent.stop();
  assert.deepEqual([stopped.State, stopped.NumUsers, stopped.NumUsersRemoved], ['stopped', 0, 20]);
  assert.equal((await agent.destroy()).State, 'stopped');
  assert.equal(standIn.agents.has('lt0'), false);
});

test('agent errors carry the HTTP status and the API message', async () => {
  const missing = new AgentClient('lt9', { baseUrl });
  await assert.rejects(missing.status(), (e: unknown) => {
    assert.ok(e instanceof LoadTestNgError);
    assert.equal(e.httpStatus, 404);
    assert.equal(e.apiError, 'load-test agent with id lt9 not found');
    assert.match(e.message, /create it first/);
    return true;
  });

  const agent = new AgentClient('lt1', { baseUrl });
  await agent.create(loadTestConfig(10), simul);
  await assert.rejects(agent.create(loadTestConfig(10), simul), (e: unknown) => e instanceof LoadTestNgError && e.httpStatus === 409);
  await assert.rejects(new AgentClient('lt2', { baseUrl }).create(loadTestConfig(0), simul), (e: unknown) => {
    assert.ok(e instanceof LoadTestNgError);
    assert.equal(e.httpStatus, 400);
    assert.match(e.message, /MaxActiveUsers/);
    return true;
  });
  await agent.run();
  // run twice: load-test-ng answers 200 with an error field; that is a failure.
  await assert.rejects(agent.run(), (e: unknown) => e instanceof LoadTestNgError && e.httpStatus === 200 && e.apiError === 'LoadTester has not stopped');
  // Amounts the agent would reject are refused before any request.
  const before = standIn.requests.length;
  await assert.rejects(agent.addUsers(0), /amount must be an integer/);
  await assert.rejects(agent.removeUsers(40000), /amount must be an integer/);
  assert.equal(standIn.requests.length, before);
  await agent.destroy();
});

test("a create that fails in NewControllerWrapper answers twice in one body; the first answer's error is the one reported", async () => {
  standIn.controllerError = 'error creating custom emoji from config: error login as sysadmin: invalid credentials';
  try {
    await assert.rejects(new AgentClient('lt6', { baseUrl }).create(loadTestConfig(10), simul), (e: unknown) => {
      assert.ok(e instanceof LoadTestNgError);
      assert.equal(e.httpStatus, 400);
      assert.equal(e.apiError, 'could not create agent: error creating custom emoji from config: error login as sysadmin: invalid credentials');
      assert.doesNotMatch(e.message, /not JSON/);
      return true;
    });
  } finally {
    standIn.controllerError = undefined;
    standIn.agents.delete('lt6');
  }
  assert.deepEqual(firstJsonValue('{"a":"}{\\"x"}\n{"b":2}\n'), { value: { a: '}{"x' } });
  assert.equal(firstJsonValue('<html>'), undefined);
  assert.equal(firstJsonValue('{"a":1'), undefined);
});

test('bad ids, non-JSON bodies, unexpected shapes and dead servers give clear errors', async () => {
  assert.throws(() => new AgentClient('LT-0', { baseUrl }), /lower-case letters/);
  assert.throws(() => new CoordinatorClient('../x', { baseUrl }), /lower-case letters/);

  const agent = new AgentClient('lt3', { baseUrl });
  standIn.rawOverride.set('/loadagent/lt3/status', { status: 502, body: '<html>bad gateway</html>' });
  await assert.rejects(agent.status(), /HTTP 502 with a body that is not JSON/);
  standIn.rawOverride.set('/loadagent/lt3/status', { status: 200, body: '{"status":{"State":"flying"}}' });
  await assert.rejects(agent.status(), /unexpected body \(status\.State/);

  const dead = new AgentClient('lt4', { baseUrl: 'http://127.0.0.1:9', timeoutMs: 2000 });
  await assert.rejects(dead.status(), (e: unknown) => e instanceof LoadTestNgError && e.httpStatus === undefined);
});

test('the fetch layer is swappable: no network needed', async () => {
  const calls: string[] = [];
  const agent = new AgentClient('lt5', {
    baseUrl: 'http://agent.invalid:4000',
    fetch: async (url, init) => {
      calls.push(`${init.method} ${url}`);
      return new Response(JSON.stringify(fixture('agent-status-200.json')), { status: 200 });
    },
  });
  const status = await agent.status();
  assert.equal(status.NumUsers, 1200);
  assert.deepEqual(calls, ['GET http://agent.invalid:4000/loadagent/lt5/status']);
});

test('coordinator lifecycle and errors', async () => {
  const coordinatorConfig: CoordinatorConfig = {
    ClusterConfig: { Agents: [{ Id: 'lt0', ApiURL: 'http://127.0.0.1:4000' }], MaxActiveUsers: 2000 },
    MonitorConfig: { PrometheusURL: 'http://127.0.0.1:9090', UpdateIntervalMs: 2000, Queries: [] },
    NumUsersInc: 8,
    NumUsersDec: 8,
    RestTimeSec: 2,
    LogSettings: {
      EnableConsole: true,
      ConsoleLevel: 'ERROR',
      ConsoleJson: false,
      EnableFile: false,
      FileLevel: 'INFO',
      FileJson: true,
      FileLocation: 'c.log',
    },
  };
  const too_small = new CoordinatorClient('small', { baseUrl });
  await assert.rejects(too_small.create(coordinatorConfig, loadTestConfig(1000)), (e: unknown) => {
    assert.ok(e instanceof LoadTestNgError);
    assert.equal(e.httpStatus, 400);
    assert.match(e.message, /should not be less than clusterConfig.MaxActiveUsers/);
    return true;
  });

  const coordinator = new CoordinatorClient('coord', { baseUrl });
  assert.equal((await coordinator.create(coordinatorConfig, loadTestConfig(2000))).State, 'stopped');
  assert.deepEqual(Object.keys(standIn.requests.at(-1)!.body as object), ['CoordinatorConfig', 'LoadTestConfig']);
  assert.equal((await coordinator.run()).State, 'running');
  assert.equal((await coordinator.status()).State, 'running');
  standIn.finishCoordinator('coord', 1704);
  const done = await coordinator.status();
  assert.deepEqual([done.State, done.SupportedUsers], ['done', 1704]);
  await assert.rejects(coordinator.run(), /coordinator is already done/);
  await assert.rejects(coordinator.stop(), (e: unknown) => e instanceof LoadTestNgError && e.httpStatus === 400);
  assert.equal((await coordinator.destroy()).State, 'done');
  await assert.rejects(coordinator.status(), (e: unknown) => e instanceof LoadTestNgError && e.httpStatus === 404);
});

test('waitForCoordinator returns at done, and stops the coordinator at maxDuration', async () => {
  const coordinatorConfig: CoordinatorConfig = {
    ClusterConfig: { Agents: [{ Id: 'lt0', ApiURL: 'http://127.0.0.1:4000' }], MaxActiveUsers: 100 },
    MonitorConfig: { PrometheusURL: 'http://127.0.0.1:9090', UpdateIntervalMs: 2000, Queries: [] },
    NumUsersInc: 8,
    NumUsersDec: 8,
    RestTimeSec: 2,
    LogSettings: {
      EnableConsole: true,
      ConsoleLevel: 'ERROR',
      ConsoleJson: false,
      EnableFile: false,
      FileLevel: 'INFO',
      FileJson: true,
      FileLocation: 'c.log',
    },
  };
  // A fake clock: each sleep advances time, so the test takes no real time.
  let clock = 0;
  const fakeTime = { now: () => clock, sleep: async (ms: number) => void (clock += ms) };

  const a = new CoordinatorClient('waita', { baseUrl });
  await a.create(coordinatorConfig, loadTestConfig(100));
  await a.run();
  let polls = 0;
  const outcome = await waitForCoordinator(a, {
    maxDurationSec: 3600,
    pollIntervalMs: 10_000,
    ...fakeTime,
    onStatus: () => {
      if (++polls === 3) standIn.finishCoordinator('waita', 90);
    },
  });
  assert.deepEqual([outcome.status.State, outcome.hitMaxDuration, polls], ['done', false, 4]);

  clock = 0;
  const b = new CoordinatorClient('waitb', { baseUrl });
  await b.create(coordinatorConfig, loadTestConfig(100));
  await b.run();
  const timedOut = await waitForCoordinator(b, { maxDurationSec: 60, pollIntervalMs: 25_000, ...fakeTime });
  assert.deepEqual([timedOut.status.State, timedOut.hitMaxDuration, clock], ['stopped', true, 60_000]);
  await a.destroy();
  await b.destroy();
});
