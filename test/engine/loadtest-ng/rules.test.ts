import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGateConfig } from '../../../src/config/load.ts';
import { MATTERMOST_HEALTH_QUERIES } from '../../../src/chat-servers/mattermost/defaults.ts';
import { buildLoadTestNgConfigs, type LoadTestNgConfigs } from '../../../src/engine/loadtest-ng/config.ts';
import { goFloat } from '../../../src/engine/loadtest-ng/rules.ts';
import { SUPPORTED_LOADTEST_NG_VERSIONS, type LoadTestNgVersion } from '../../../src/config/engine-versions.ts';
import { InputError } from '../../../src/util/errors.ts';
import { LoadTestNgStandIn } from './stand-in.ts';

/**
 * The stand-in refuses what each supported load-test-ng release refuses (rules.ts, transcribed
 * from its validate tags and handlers), with the same status and message. Every refused body
 * here was accepted by the earlier stand-in, which only checked MaxActiveUsers.
 */

const standIns = new Map<LoadTestNgVersion, LoadTestNgStandIn>();
before(async () => {
  for (const version of SUPPORTED_LOADTEST_NG_VERSIONS) {
    const s = new LoadTestNgStandIn(version);
    await s.start();
    standIns.set(version, s);
  }
});
after(async () => {
  for (const s of standIns.values()) await s.stop();
});

function gate(engine: Record<string, unknown> = {}) {
  return parseGateConfig(
    {
      version: 1,
      name: 'mm-gate',
      target: { system: 'mattermost' },
      bench: { kind: 'aws', aws: { usersPerAgent: 2000 } },
      engine: { kind: 'load-test-ng', ...engine },
      tests: [
        {
          type: 'unbounded',
          maxUsers: 4000,
          stabilityWindow: '30m',
          maxDuration: '4h',
          health: MATTERMOST_HEALTH_QUERIES.map((q) => ({ name: q.name, query: q.query, threshold: q.threshold })),
        },
      ],
    },
    'gate.yml',
  );
}

const endpoints = {
  serverUrl: 'http://10.0.1.10',
  prometheusUrl: 'http://10.0.1.20:9090',
  agents: [
    { id: 'lt0', apiUrl: 'http://10.0.2.1:4000' },
    { id: 'lt1', apiUrl: 'http://10.0.2.2:4000' },
  ],
  admin: { email: 'sysadmin@example.com', password: 'secret-pass' },
};

function configs(): LoadTestNgConfigs {
  const config = gate();
  return buildLoadTestNgConfigs(config, config.tests[0]!, endpoints);
}

let nextId = 0;
async function post(version: LoadTestNgVersion, kind: 'loadagent' | 'coordinator', body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const id = `lt${nextId++}`;
  const res = await fetch(`${standIns.get(version)!.baseUrl}/${kind}/create?id=${id}`, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

type Mutator = (c: LoadTestNgConfigs) => void;
const agentBody = (mutate: Mutator) => {
  const c = structuredClone(configs());
  mutate(c);
  return { LoadTestConfig: c.loadTest, SimulControllerConfig: c.simulController };
};
const coordinatorBody = (mutate: Mutator) => {
  const c = structuredClone(configs());
  mutate(c);
  return { CoordinatorConfig: c.coordinator, LoadTestConfig: c.loadTest };
};

test('the configs loadgate builds are accepted by every supported release', async () => {
  for (const version of SUPPORTED_LOADTEST_NG_VERSIONS) {
    assert.equal(
      (
        await post(
          version,
          'loadagent',
          agentBody(() => {}),
        )
      ).status,
      201,
      version,
    );
    assert.equal(
      (
        await post(
          version,
          'coordinator',
          coordinatorBody(() => {}),
        )
      ).status,
      201,
      version,
    );
  }
});

test('finding 1: without BrowserLogSettings v1.29.0-v1.32.0 answer 400 "ConsoleLevel is not valid"; v1.33.0-rc2 accepts it', async () => {
  const old = agentBody((c) => {
    delete (c.loadTest as Partial<typeof c.loadTest>).BrowserLogSettings;
  });
  for (const version of SUPPORTED_LOADTEST_NG_VERSIONS) {
    const res = await post(version, 'loadagent', old);
    if (version === 'v1.33.0-rc2') {
      assert.equal(res.status, 201, version);
    } else {
      assert.equal(res.status, 400, version);
      assert.equal(
        res.body.error,
        'could not validate config: ConsoleLevel is not valid: value is not one of valid values: ["trace" "debug" "info" "warn" "error" "fatal"]',
        version,
      );
    }
  }
  // The coordinator create route validates the same load-test config.
  const coord = await post(
    'v1.29.0',
    'coordinator',
    coordinatorBody((c) => delete (c.loadTest as Partial<typeof c.loadTest>).BrowserLogSettings),
  );
  assert.equal(coord.status, 400);
  assert.match(String(coord.body.error), /^could not validate load-test config: ConsoleLevel is not valid/);
});

const agentRules: { name: string; mutate: Mutator; error: string; versions?: readonly LoadTestNgVersion[] }[] = [
  { name: 'ServerURL url', mutate: (c) => void (c.loadTest.ConnectionConfiguration.ServerURL = ''), error: 'could not validate config: parse "": empty url' },
  {
    name: 'AdminEmail email',
    mutate: (c) => void (c.loadTest.ConnectionConfiguration.AdminEmail = 'admin'),
    error: 'could not validate config: admin is not a valid e-mail address',
  },
  {
    name: 'AdminPassword notempty',
    mutate: (c) => void (c.loadTest.ConnectionConfiguration.AdminPassword = ''),
    error: 'could not validate config: AdminPassword is empty',
  },
  {
    name: 'Type oneof',
    mutate: (c) => void ((c.loadTest.UserControllerConfiguration as { Type: string }).Type = 'simulated'),
    error: 'could not validate config: Type is not valid: value is not one of valid values: ["simple" "simulative" "noop" "cluster" "generative" "browser"]',
  },
  {
    name: 'Rate range',
    mutate: (c) => void (c.loadTest.UserControllerConfiguration.RatesDistribution[0]!.Rate = -1),
    error: 'could not validate config: Rate is not in the range of range:[0,): value -1 is lesser than 0',
  },
  {
    name: 'NumTeams range',
    mutate: (c) => void (c.loadTest.InstanceConfiguration.NumTeams = -2),
    error: 'could not validate config: NumTeams is not in the range of range:[0,]: value -2 is lesser than 0',
  },
  {
    name: 'PercentReplies range',
    mutate: (c) => void (c.loadTest.InstanceConfiguration.PercentReplies = 1.5),
    error: 'could not validate config: PercentReplies is not in the range of range:[0,1]: value 1.5 is greater than 1',
  },
  {
    name: 'InitialActiveUsers <= MaxActiveUsers',
    mutate: (c) => void (c.loadTest.UsersConfiguration.InitialActiveUsers = 2001),
    error: 'could not validate config: InitialActiveUsers is not in the range of range:[0,$MaxActiveUsers]: value 2001 is greater than 2000',
  },
  {
    name: 'MaxActiveUsers range',
    mutate: (c) => void (c.loadTest.UsersConfiguration.MaxActiveUsers = 0),
    error: 'could not validate config: MaxActiveUsers is not in the range of range:(0,]: value 0 is lesser or equal than 0',
  },
  {
    name: 'AvgSessionsPerUser range',
    mutate: (c) => void (c.loadTest.UsersConfiguration.AvgSessionsPerUser = 0),
    error: 'could not validate config: AvgSessionsPerUser is not in the range of range:[1,]: value 0 is lesser than 1',
  },
  {
    name: 'LogSettings.ConsoleLevel upper-case oneof',
    mutate: (c) => void (c.loadTest.LogSettings.ConsoleLevel = 'error'),
    error: 'could not validate config: ConsoleLevel is not valid: value is not one of valid values: ["TRACE" "DEBUG" "INFO" "WARN" "ERROR"]',
  },
  {
    name: 'BrowserLogSettings.FileLevel lower-case oneof',
    mutate: (c) => void (c.loadTest.BrowserLogSettings.FileLevel = 'ERROR'),
    error: 'could not validate config: FileLevel is not valid: value is not one of valid values: ["trace" "debug" "info" "warn" "error" "fatal"]',
    versions: ['v1.29.0', 'v1.30.0', 'v1.31.0', 'v1.32.0'],
  },
  {
    name: 'BrowserConfiguration.SimulationTimeoutMs (v1.30.0 only)',
    mutate: (c) => void ((c.loadTest as unknown as Record<string, unknown>).BrowserConfiguration = { Headless: true, SimulationTimeoutMs: -1 }),
    error: 'could not validate config: SimulationTimeoutMs is not in the range of range:[0,]: value -1 is lesser than 0',
    versions: ['v1.30.0'],
  },
  {
    name: 'AvgIdleTimeMs > MinIdleTimeMs',
    mutate: (c) => void (c.simulController.AvgIdleTimeMs = c.simulController.MinIdleTimeMs),
    error: 'could not validate controller configuration: AvgIdleTimeMs is not in the range of range:($MinIdleTimeMs,]: value 1000 is lesser or equal than 1000',
  },
  {
    name: 'RatesDistribution percentages sum to 1 (Config.IsValid, run by loadtest.New)',
    mutate: (c) => void (c.loadTest.UserControllerConfiguration.RatesDistribution[0]!.Percentage = 0.5),
    error: 'could not create agent: could not validate configuration: Percentages in RatesDistribution should sum to 1',
  },
  {
    name: 'channel percentages sum to 1',
    mutate: (c) => void (c.loadTest.InstanceConfiguration.PercentGroupChannels = 0.3),
    error: 'could not create agent: could not validate configuration: sum of percentages for channels should be equal to 1',
  },
  {
    name: 'a wrong JSON type is a decode error',
    mutate: (c) => void ((c.loadTest.UsersConfiguration as unknown as Record<string, unknown>).MaxActiveUsers = '2000'),
    error: 'could not read request: json: cannot unmarshal string into Go struct field Config.UsersConfiguration.MaxActiveUsers of type int',
  },
];

for (const rule of agentRules) {
  test(`agent create refuses a config that breaks ${rule.name}`, async () => {
    const body = agentBody(rule.mutate);
    for (const version of SUPPORTED_LOADTEST_NG_VERSIONS) {
      const res = await post(version, 'loadagent', body);
      if (rule.versions && !rule.versions.includes(version)) {
        assert.equal(res.status, 201, `${version} has no such rule`);
        continue;
      }
      assert.equal(res.status, 400, version);
      assert.equal(res.body.error, rule.error, version);
    }
  });
}

const coordinatorRules: { name: string; mutate: Mutator; error: string }[] = [
  {
    name: 'RestTimeSec*1000 >= UpdateIntervalMs',
    mutate: (c) => {
      c.coordinator.RestTimeSec = 1;
      c.coordinator.MonitorConfig.UpdateIntervalMs = 2000;
    },
    error: 'could not create coordinator: could not validate configuration: RestTimeSec (1) should greater than MonitorConfig.UpdateIntervalMs/1000 (2)',
  },
  {
    name: 'PrometheusURL set',
    mutate: (c) => void (c.coordinator.MonitorConfig.PrometheusURL = ''),
    error: 'could not create coordinator: could not validate configuration: PrometheusURL cannot be empty',
  },
  {
    name: 'query Threshold >= 0',
    mutate: (c) => void (c.coordinator.MonitorConfig.Queries[0]!.Threshold = -1),
    error: 'could not create coordinator: could not validate configuration: Threshold is not in the range of range:[0,]: value -1 is lesser than 0',
  },
  {
    name: 'query Description notempty',
    mutate: (c) => void (c.coordinator.MonitorConfig.Queries[0]!.Description = ''),
    error: 'could not create coordinator: could not validate configuration: Description is empty',
  },
  {
    name: 'NumUsersInc > 0',
    mutate: (c) => void (c.coordinator.NumUsersInc = 0),
    error: 'could not create coordinator: could not validate configuration: NumUsersInc is not in the range of range:(0,]: value 0 is lesser or equal than 0',
  },
  {
    name: 'agents x MaxActiveUsers covers the cluster',
    mutate: (c) => void (c.coordinator.ClusterConfig.MaxActiveUsers = 4001),
    error:
      'could not create coordinator: could not validate ltConfig against clusterConfig: coordinator: total MaxActiveUsers in loadTest should not be less than clusterConfig.MaxActiveUsers',
  },
];

for (const rule of coordinatorRules) {
  test(`coordinator create refuses a config that breaks ${rule.name}`, async () => {
    for (const version of SUPPORTED_LOADTEST_NG_VERSIONS) {
      const res = await post(version, 'coordinator', coordinatorBody(rule.mutate));
      assert.equal(res.status, 400, version);
      assert.equal(res.body.error, rule.error, version);
      assert.equal(res.body.message, 'load-test coordinator creation failed', version);
    }
  });
}

test('finding 7: UpdateIntervalMs is sent as the fixed 1000 ms, and a restTime under 1 s is refused before any agent sees it', () => {
  assert.equal(configs().coordinator.MonitorConfig.UpdateIntervalMs, 1000);
  const config = parseGateConfig(
    {
      version: 1,
      name: 'mm-gate',
      target: { system: 'mattermost' },
      bench: { kind: 'aws' },
      engine: { kind: 'load-test-ng' },
      tests: [{ type: 'unbounded', maxUsers: 100, stabilityWindow: '30m', maxDuration: '4h', health: [{ name: 'x', query: 'up', threshold: 1 }] }],
    },
    'gate.yml',
  );
  // The gate schema takes whole seconds; a zero step still reaches the builder, which must refuse it.
  const test0 = { ...config.tests[0]!, restTime: 0 };
  assert.throws(
    () => buildLoadTestNgConfigs(config, test0, endpoints),
    (e: Error) => e instanceof InputError && /RestTimeSec\*1000 >= UpdateIntervalMs/.test(e.message),
  );
});

test('finding 2: engine.version defaults per engine, and a load-test-ng version outside the supported range is refused', () => {
  assert.equal(gate().engine.version, 'v1.32.0');
  assert.equal(
    parseGateConfig(
      {
        version: 1,
        name: 'g',
        target: { system: 'mattermost' },
        bench: { kind: 'aws' },
        tests: [{ type: 'bounded', users: 10, rampUp: '1m', duration: '5m' }],
      },
      'g.yml',
    ).engine.version,
    'v1.4.2',
  );
  const config = gate({ version: 'v1.4.2' });
  assert.throws(
    () => buildLoadTestNgConfigs(config, config.tests[0]!, endpoints),
    (e: Error) => e instanceof InputError && /engine.version: "v1.4.2" is not a load-test-ng release/.test(e.message),
  );
});

test("numbers print as Go's %v of a float64", () => {
  assert.deepEqual([0, 1, -1, 1.5, 2000, 123456, 1e6, 1234567, 0.0001, 0.00001].map(goFloat), [
    '0',
    '1',
    '-1',
    '1.5',
    '2000',
    '123456',
    '1e+06',
    '1.234567e+06',
    '0.0001',
    '1e-05',
  ]);
});
