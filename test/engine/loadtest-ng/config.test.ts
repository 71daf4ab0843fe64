import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGateConfig } from '../../../src/config/load.ts';
import type { GateConfig } from '../../../src/config/schema.ts';
import { MATTERMOST_HEALTH_QUERIES, CEILING_ACTION_FREQUENCIES } from '../../../src/chat-servers/mattermost/defaults.ts';
import { buildLoadTestNgConfigs, type LoadTestNgEndpoints } from '../../../src/engine/loadtest-ng/config.ts';
import { InputError } from '../../../src/util/errors.ts';

function gate(overrides: Record<string, unknown> = {}): GateConfig {
  return parseGateConfig(
    {
      version: 1,
      name: 'mm-gate',
      target: { system: 'mattermost' },
      bench: { kind: 'aws', aws: { usersPerAgent: 2000 } },
      engine: { kind: 'load-test-ng', idle: { minimumMs: 1000, averageMs: 20000, rateMultiplier: 5.4 } },
      tests: [
        { type: 'bounded', users: 7500, rampUp: '15m', duration: '90m' },
        {
          type: 'unbounded',
          maxUsers: 20000,
          stabilityWindow: '30m',
          maxDuration: '4h',
          health: MATTERMOST_HEALTH_QUERIES.map((q, i) => ({
            name: q.name,
            query: q.query,
            threshold: q.threshold,
            minInterval: i === 0 ? '1m' : 0,
            enabled: i !== 8,
          })),
        },
      ],
      ...overrides,
    },
    'test gate.yml',
  );
}

const endpoints: LoadTestNgEndpoints = {
  serverUrl: 'http://10.0.1.10/',
  prometheusUrl: 'http://10.0.1.20:9090',
  agents: Array.from({ length: 11 }, (_, i) => ({ id: `lt${i}`, apiUrl: `http://10.0.2.${i + 1}:4000` })),
  admin: { email: 'sysadmin@example.com', password: 'secret-pass' },
  usersFilePath: '/home/ubuntu/users.txt',
};

test('agent config.json matches the ceiling-test settings', () => {
  const config = gate();
  const { loadTest, simulController } = buildLoadTestNgConfigs(config, config.tests[1]!, endpoints);
  assert.deepEqual(loadTest.UserControllerConfiguration, { Type: 'simulative', RatesDistribution: [{ Rate: 5.4, Percentage: 1 }], ServerVersion: '' });
  assert.equal(loadTest.UsersConfiguration.MaxActiveUsers, 2000);
  assert.equal(loadTest.UsersConfiguration.UsersFilePath, '/home/ubuntu/users.txt');
  assert.deepEqual(loadTest.ConnectionConfiguration, {
    ServerURL: 'http://10.0.1.10',
    WebSocketURL: 'ws://10.0.1.10',
    AdminEmail: 'sysadmin@example.com',
    AdminPassword: 'secret-pass',
  });
  const ic = loadTest.InstanceConfiguration;
  assert.equal(ic.PercentPublicChannels + ic.PercentPrivateChannels + ic.PercentDirectChannels + ic.PercentGroupChannels, 1);
  assert.deepEqual([simulController.MinIdleTimeMs, simulController.AvgIdleTimeMs], [1000, 20000]);
});

test('coordinator.json carries the health queries, the step and the cluster size', () => {
  const config = gate();
  const { coordinator } = buildLoadTestNgConfigs(config, config.tests[1]!, endpoints);
  assert.equal(coordinator.ClusterConfig.MaxActiveUsers, 20000);
  assert.equal(coordinator.ClusterConfig.Agents.length, 11);
  assert.deepEqual(coordinator.ClusterConfig.Agents[3], { Id: 'lt3', ApiURL: 'http://10.0.2.4:4000' });
  assert.deepEqual([coordinator.NumUsersInc, coordinator.NumUsersDec, coordinator.RestTimeSec], [8, 8, 2]);
  assert.equal(coordinator.MonitorConfig.PrometheusURL, 'http://10.0.1.20:9090');
  const queries = coordinator.MonitorConfig.Queries;
  assert.equal(queries.length, 9);
  assert.deepEqual(queries[0], {
    Description: 'HTTP 5xx server errors (%)',
    Query: MATTERMOST_HEALTH_QUERIES[0]!.query,
    Threshold: 0.025,
    MinIntervalSec: 60,
    Alert: true,
  });
  // A disabled health query is still watched but never alerts.
  assert.equal(queries[8]!.Alert, false);
  assert.equal(queries[2]!.Threshold, 2);
});

test('bounded tests ramp through the coordinator with non-alerting queries', () => {
  const config = gate();
  const { coordinator } = buildLoadTestNgConfigs(config, config.tests[0]!, endpoints);
  assert.equal(coordinator.ClusterConfig.MaxActiveUsers, 7500);
  assert.ok(coordinator.MonitorConfig.Queries.every((q) => !q.Alert));
  assert.equal(coordinator.MonitorConfig.Queries.length, 9);
  // 7500 users over 15 minutes in 2 s steps: 450 steps of 17 users.
  assert.deepEqual([coordinator.NumUsersInc, coordinator.RestTimeSec], [17, 2]);
  assert.ok(coordinator.NumUsersInc * (900 / coordinator.RestTimeSec) >= 7500);
});

test('rejects what load-test-ng would reject, naming the gate field', () => {
  const tooFewAgents = { ...endpoints, agents: endpoints.agents.slice(0, 3) };
  const config = gate();
  assert.throws(
    () => buildLoadTestNgConfigs(config, config.tests[1]!, tooFewAgents),
    (e: unknown) => e instanceof InputError && /bench\.aws\.usersPerAgent: 3 agent\(s\) x 2000 users = 6000, fewer than the 20000/.test(e.message),
  );
  const badIdle = gate({ engine: { kind: 'load-test-ng', idle: { minimumMs: 5000, averageMs: 5000 } } });
  assert.throws(() => buildLoadTestNgConfigs(badIdle, badIdle.tests[0]!, endpoints), /engine\.idle\.averageMs: must be greater/);

  const customActions = gate({ engine: { kind: 'load-test-ng', actions: { SwitchChannel: 1, CreatePost: 1 } } });
  assert.throws(
    () => buildLoadTestNgConfigs(customActions, customActions.tests[0]!, endpoints),
    /engine\.actions: load-test-ng has its action frequencies built in/,
  );
  // The ceiling table itself is what load-test-ng runs, so spelling it out is fine.
  const sameActions = gate({ engine: { kind: 'load-test-ng', actions: { ...CEILING_ACTION_FREQUENCIES } } });
  assert.doesNotThrow(() => buildLoadTestNgConfigs(sameActions, sameActions.tests[0]!, endpoints));

  const zeroRest = gate();
  const unbounded = zeroRest.tests[1]!;
  assert.equal(unbounded.type, 'unbounded');
  if (unbounded.type === 'unbounded') unbounded.restTime = 0;
  assert.throws(() => buildLoadTestNgConfigs(zeroRest, unbounded, endpoints), /restTime must be at least 1s/);
});

test('bad endpoints are reported by field without echoing secrets', () => {
  const config = gate();
  const bad = { ...endpoints, serverUrl: 'ftp://x', agents: [{ id: 'Agent-1', apiUrl: 'http://10.0.0.1:4000' }], admin: { email: 'a@b.c', password: '' } };
  assert.throws(
    () => buildLoadTestNgConfigs(config, config.tests[0]!, bad),
    (e: unknown) => {
      assert.ok(e instanceof InputError);
      assert.match(e.message, /serverUrl/);
      assert.match(e.message, /agents\[0\]\.id/);
      assert.match(e.message, /admin\.password/);
      return true;
    },
  );
  const dup = { ...endpoints, agents: [endpoints.agents[0]!, endpoints.agents[0]!] };
  assert.throws(() => buildLoadTestNgConfigs(config, config.tests[0]!, dup), /id "lt0" is used twice/);
  const leaky = { ...endpoints, prometheusUrl: 'not a url' };
  assert.throws(
    () => buildLoadTestNgConfigs(config, config.tests[0]!, leaky),
    (e: unknown) => e instanceof Error && !e.message.includes('secret-pass'),
  );
});
