import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { K6Api, type FetchLike } from '../../src/engine/k6/api.ts';
import {
  K6AgentUsers,
  loadTestNgUserProblems,
  loadTestNgUsersFile,
  MultiAgentUsers,
  partitionUsers,
  perAgentMax,
  splitUsers,
  type AgentUsers,
} from '../../src/bench/aws/agent-users.ts';
import { createLoadAgents } from '../../src/bench/aws/load-agents.ts';
import type { RemoteResult, RemoteShell } from '../../src/bench/aws/remote-shell.ts';
import { awsBenchDescriptionSchema } from '../../src/aws/terraform-outputs.ts';
import { loadTestNgAccount, LoadTestNgStandIn } from '../engine/loadtest-ng/stand-in.ts';
import { InputError } from '../../src/util/errors.ts';
import { awsGate } from '../aws/fixtures.ts';

test('users are split evenly over the agents, the first ones taking the remainder', () => {
  assert.deepEqual(splitUsers(0, 3), [0, 0, 0]);
  assert.deepEqual(splitUsers(7, 3), [3, 2, 2]);
  assert.deepEqual(
    splitUsers(20000, 11).reduce((a, b) => a + b, 0),
    20000,
  );
  assert.ok(Math.max(...splitUsers(20000, 11)) - Math.min(...splitUsers(20000, 11)) <= 1);
  assert.equal(perAgentMax(20000, 11), 1819);
  assert.equal(perAgentMax(30, 2), 15);
  assert.throws(() => splitUsers(-1, 2), RangeError);
  assert.throws(() => splitUsers(3.5, 2), RangeError);
  assert.throws(() => splitUsers(3, 0), RangeError);
});

class FakeAgent implements AgentUsers {
  users = 0;
  constructor(
    readonly name: string,
    readonly maxUsers: number,
    private readonly failAbove = Infinity,
  ) {}
  async setUsers(n: number): Promise<void> {
    if (n > this.failAbove) throw new Error('k6 REST API PATCH /v1/status failed: ECONNREFUSED');
    this.users = n;
  }
  async activeUsers(): Promise<number> {
    return this.users;
  }
}

test('the coordinator sees one user count; every agent gets its share in parallel, failures name the agent', async () => {
  const agents = [new FakeAgent('agent0', 5), new FakeAgent('agent1', 5), new FakeAgent('agent2', 5, 2)];
  const users = new MultiAgentUsers(agents);
  assert.equal(users.maxUsers, 15);
  await users.setUsers(5);
  assert.deepEqual(
    agents.map((a) => a.users),
    [2, 2, 1],
  );
  assert.equal(await users.activeUsers(), 5);
  await assert.rejects(users.setUsers(9), /setting 9 users failed on 1 agent\(s\): agent2: k6 REST API PATCH \/v1\/status failed: ECONNREFUSED/);
  await assert.rejects(users.setUsers(16), /cannot run 16 users on 3 agent\(s\) with 15 users at most/);
});

test("a k6 agent is driven through its REST API at the agent's address", async () => {
  const requests: { url: string; method?: string; body?: string }[] = [];
  let vus = 0;
  const fetch: FetchLike = async (url, init) => {
    requests.push({ url, ...(init?.method ? { method: init.method } : {}), ...(init?.body ? { body: init.body } : {}) });
    if (init?.method === 'PATCH') vus = (JSON.parse(init.body ?? '{}') as { data: { attributes: { vus: number } } }).data.attributes.vus;
    const status = {
      data: { type: 'status', id: 'default', attributes: { status: 7, paused: false, vus, 'vus-max': 15, stopped: false, running: true, tainted: false } },
    };
    return { status: 200, text: async () => JSON.stringify(status) };
  };
  const agent = new K6AgentUsers('agent1', new K6Api({ host: '203.0.113.32', port: 6565, fetch }), 15);
  await agent.setUsers(4);
  assert.equal(await agent.activeUsers(), 4);
  assert.equal(requests[0]?.url, 'http://203.0.113.32:6565/v1/status');
  assert.equal(requests[0]?.method, 'PATCH');
  assert.throws(() => new K6Api({ host: '203.0.113.32/evil', port: 6565 }), /must be an address or host name/);
});

const noopShell = (scripts: string[]): RemoteShell => ({
  async run(ids, script) {
    scripts.push(script);
    return new Map(ids.map((id): [string, RemoteResult] => [id, { instanceId: id, status: 'Success', exitCode: 0, stdout: '', stderr: '' }]));
  },
});

test('load-test-ng agents: the users file is uploaded, each agent created with its share, users added and removed, destroyed after the run', async () => {
  const standIns = [new LoadTestNgStandIn(), new LoadTestNgStandIn()];
  const urls = await Promise.all(standIns.map((s) => s.start()));
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-ltng-'));
  try {
    const usersFile = join(dir, 'users.txt');
    writeFileSync(usersFile, Array.from({ length: 30 }, (_, i) => `user${i + 1}@example.com pass-${i + 1}`).join('\n'));
    const bench = awsBenchDescriptionSchema.parse({
      kind: 'aws',
      benchName: 'lg-1-1',
      region: 'us-east-1',
      vpcId: 'vpc-0a18f1a4cdf62d256',
      proxy: { url: 'http://10.42.100.10', instanceId: 'i-0123456789abcdef0' },
      app: { privateIps: ['10.42.100.21'], instanceIds: ['i-0aaaaaaaaaaaaaaa1'] },
      agents: {
        privateIps: ['10.42.0.31', '10.42.1.32'],
        publicIps: ['203.0.113.31', '203.0.113.32'],
        instanceIds: ['i-0bbbbbbbbbbbbbbb1', 'i-0bbbbbbbbbbbbbbb2'],
        apiPort: 4000,
        engine: 'load-test-ng',
      },
      metrics: {
        instanceId: 'i-0cccccccccccccccc',
        privateIp: '10.42.0.10',
        publicIp: '203.0.113.10',
        prometheusUrl: 'http://203.0.113.10:9090',
        grafanaUrl: 'http://203.0.113.10:3000',
        pyroscopeUrl: 'http://203.0.113.10:4040',
        grafanaTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-1-1/grafana-token-AbCdEf',
      },
      database: {
        clusterIdentifier: 'lg-1-1',
        writerEndpoint: 'w.example',
        readerEndpoint: 'r.example',
        port: 5432,
        name: 'ltdb',
        secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-1-AbCdEf',
      },
      openSearchEndpoint: null,
      instances: { app: '1 x c7i.large' },
    });
    const scripts: string[] = [];
    const config = awsGate({ agentCount: 2 }, { engine: { kind: 'load-test-ng' } });
    const agents = createLoadAgents({
      config,
      configDir: dir,
      bench,
      shell: noopShell(scripts),
      readyTimeoutSec: 5,
      // Each agent's public address:4000, routed to its stand-in.
      endpoint: (host, port) => {
        assert.equal(port, 4000);
        return urls[bench.agents.publicIps.indexOf(host)]!;
      },
      admin: { email: 'sysadmin@example.com', password: 'not-logged' },
    });
    await agents.prepare(usersFile);
    assert.ok(
      scripts.some((s) => s.includes("'users.txt.part'")),
      'each agent gets its users file',
    );
    const test = config.tests.find((t) => t.type === 'bounded')!;
    const load = await agents.start({ ...test, users: 30 });
    for (const standIn of standIns) {
      const create = standIn.requests.find((r) => r.url.startsWith('/loadagent/create'))!;
      const body = create.body as {
        LoadTestConfig: { UsersConfiguration: { MaxActiveUsers: number; UsersFilePath: string }; ConnectionConfiguration: { ServerURL: string } };
      };
      assert.equal(body.LoadTestConfig.UsersConfiguration.MaxActiveUsers, 15, 'each agent can run its share');
      assert.equal(body.LoadTestConfig.UsersConfiguration.UsersFilePath, '/var/lib/loadgate/users.txt');
      assert.equal(body.LoadTestConfig.ConnectionConfiguration.ServerURL, 'http://10.42.100.10');
      assert.ok(standIn.requests.some((r) => r.url === '/loadagent/lgagent' + standIns.indexOf(standIn) + '/run'));
    }
    await load.users.setUsers(7);
    assert.deepEqual(
      standIns.map((s) => [...s.agents.values()][0]?.NumUsers),
      [4, 3],
    );
    await load.users.setUsers(2);
    assert.deepEqual(
      standIns.map((s) => [...s.agents.values()][0]?.NumUsers),
      [1, 1],
    );
    assert.equal(await load.users.activeUsers(), 2);
    assert.deepEqual(await load.check(), []);
    await assert.rejects(load.users.setUsers(31), /cannot run 31 users/);
    assert.deepEqual(await agents.stop(), []);
    assert.deepEqual(
      standIns.map((s) => s.agents.size),
      [0, 0],
      'destroyed after the run',
    );
    assert.ok(!JSON.stringify(scripts).includes('not-logged'), 'the admin password never goes through the shell');
  } finally {
    await Promise.all(standIns.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
});

/** What the upload scripts wrote to `file` on each instance (the base64 chunks, decoded). */
function uploaded(calls: { ids: readonly string[]; script: string }[], file: string): Map<string, string> {
  const chunks = new Map<string, string>();
  for (const { ids, script } of calls) {
    const m = new RegExp(`printf '%s' '([A-Za-z0-9+/=]*)' >> "\\$home"/'${file}.part'`).exec(script);
    if (!m) continue;
    for (const id of ids) chunks.set(id, (chunks.get(id) ?? '') + m[1]);
  }
  return new Map([...chunks].map(([id, b64]) => [id, Buffer.from(b64, 'base64').toString('utf8')]));
}

function benchWithAgents(n: number, engine: 'k6' | 'load-test-ng') {
  const ids = Array.from({ length: n }, (_, i) => `i-0bbbbbbbbbbbbbb${i.toString(16).padStart(2, '0')}`);
  return awsBenchDescriptionSchema.parse({
    kind: 'aws',
    benchName: 'lg-1-1',
    region: 'us-east-1',
    vpcId: 'vpc-0a18f1a4cdf62d256',
    proxy: { url: 'http://10.42.100.10', instanceId: 'i-0123456789abcdef0' },
    app: { privateIps: ['10.42.100.21'], instanceIds: ['i-0aaaaaaaaaaaaaaa1'] },
    agents: {
      privateIps: ids.map((_, i) => `10.42.0.${i + 31}`),
      publicIps: ids.map((_, i) => `203.0.113.${i + 31}`),
      instanceIds: ids,
      apiPort: engine === 'k6' ? 6565 : 4000,
      engine,
    },
    metrics: {
      instanceId: 'i-0cccccccccccccccc',
      privateIp: '10.42.0.10',
      publicIp: '203.0.113.10',
      prometheusUrl: 'http://203.0.113.10:9090',
      grafanaUrl: 'http://203.0.113.10:3000',
      pyroscopeUrl: 'http://203.0.113.10:4040',
      grafanaTokenSecretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-1-1/grafana-token-AbCdEf',
    },
    database: {
      clusterIdentifier: 'lg-1-1',
      writerEndpoint: 'w.example',
      readerEndpoint: 'r.example',
      port: 5432,
      name: 'ltdb',
      secretArn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-1-AbCdEf',
    },
    openSearchEndpoint: null,
    instances: { app: '1 x c7i.large' },
  });
}

test('the users file is partitioned, no account on two agents, every account used, for 1, 2 and 11 agents and both engines', async () => {
  const lines = Array.from({ length: 100 }, (_, i) => `user${i + 1}@example.com pass-${i + 1}`);
  const dir = mkdtempSync(join(tmpdir(), 'loadgate-users-'));
  try {
    const usersFile = join(dir, 'users.txt');
    writeFileSync(usersFile, `${lines.join('\n')}\n\n`);
    for (const agentCount of [1, 2, 11]) {
      const slices = partitionUsers(`${lines.join('\n')}\n`, agentCount);
      assert.equal(slices.length, agentCount);
      assert.deepEqual(slices.flat().sort(), [...lines].sort(), `${agentCount} agents: every user is used once`);
      assert.ok(Math.max(...slices.map((s) => s.length)) - Math.min(...slices.map((s) => s.length)) <= 1, 'balanced');
      for (const engine of ['k6', 'load-test-ng'] as const) {
        const calls: { ids: readonly string[]; script: string }[] = [];
        const shell: RemoteShell = {
          async run(ids, script) {
            calls.push({ ids, script });
            return new Map(ids.map((id): [string, RemoteResult] => [id, { instanceId: id, status: 'Success', exitCode: 0, stdout: '', stderr: '' }]));
          },
        };
        const bench = benchWithAgents(agentCount, engine);
        const config = awsGate({ agentCount }, { engine: { kind: engine } });
        const agents = createLoadAgents({
          config,
          configDir: dir,
          bench,
          shell,
          readyTimeoutSec: 1,
          endpoint: () => 'http://127.0.0.1:9',
          admin: { email: 'a@example.com', password: 'x' },
        });
        await agents.prepare(usersFile);
        const files = uploaded(calls, 'users.txt');
        assert.equal(files.size, agentCount, `${engine}, ${agentCount} agents: one users file per agent`);
        const seen = new Set<string>();
        for (const [i, id] of bench.agents.instanceIds.entries()) {
          const file = (files.get(id) ?? '').split('\n').filter(Boolean);
          // The accounts the engine logs its users 1..n in as: k6's VU k takes line k-1;
          // load-test-ng's user k takes line k (loadTestNgAccount).
          const got = engine === 'k6' ? file : slices[i]!.map((_, k) => loadTestNgAccount(file, k + 1, `lgagent${i}`));
          assert.deepEqual(
            got.map((l) => l.split(' ')[0]),
            slices[i]!.map((l) => l.split(' ')[0]),
            `${engine}: agent${i}'s users are slice ${i}, one account each`,
          );
          for (const user of got) {
            assert.ok(!seen.has(user), `${user} on two agents`);
            seen.add(user);
          }
        }
        assert.equal(seen.size, lines.length);
        // A test with more users per agent than a slice holds would share accounts: refused.
        const bounded = config.tests.find((t) => t.type === 'bounded')!;
        await assert.rejects(
          agents.start({ ...bounded, users: lines.length + agentCount }),
          /--users-file: 100 users split over .* each simulated user needs its own account/,
        );
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a load-test-ng users file is "email password" split on one space; other lines are refused before any upload, by line', async () => {
  assert.deepEqual(loadTestNgUserProblems('a@example.com pw\n\nopenid:b@example.com pw\nsaml:c@example.com pw\n'), []);
  assert.deepEqual(loadTestNgUserProblems('user1 pw\nnospace\nd@example.com pass word\nldap:e@example.com pw\nf@g@example.com pw\n'), [
    'line 1: "user1" is not an email address; load-test-ng logs users in by email',
    'line 2: no space between the email and the password',
    'line 3: more than one space; load-test-ng reads "email password" split on single spaces and would drop the rest',
    'line 4: "ldap:" is not a login type load-test-ng knows (openid, saml, mattermost)',
    'line 5: "f@g@example.com" is not an email address; load-test-ng logs users in by email',
  ]);
  // Line 0 is never a user: the file repeats the first account there.
  assert.equal(loadTestNgUsersFile(['a@x.io 1', 'b@x.io 2']), 'a@x.io 1\na@x.io 1\nb@x.io 2\n');
  assert.equal(loadTestNgUsersFile([]), '');

  const dir = mkdtempSync(join(tmpdir(), 'loadgate-ltng-users-'));
  try {
    const usersFile = join(dir, 'users.txt');
    writeFileSync(usersFile, 'user1 pass-1\nuser2 pass-2\n');
    const calls: string[] = [];
    const shell: RemoteShell = {
      async run(ids, script) {
        calls.push(script);
        return new Map(ids.map((id): [string, RemoteResult] => [id, { instanceId: id, status: 'Success', exitCode: 0, stdout: '', stderr: '' }]));
      },
    };
    const config = awsGate({ agentCount: 1 }, { engine: { kind: 'load-test-ng' } });
    const agents = createLoadAgents({
      config,
      configDir: dir,
      bench: benchWithAgents(1, 'load-test-ng'),
      shell,
      readyTimeoutSec: 1,
      endpoint: () => 'http://127.0.0.1:9',
      admin: { email: 'a@example.com', password: 'x' },
    });
    await assert.rejects(
      agents.prepare(usersFile),
      (e: unknown) =>
        e instanceof InputError &&
        /--users-file: users\.txt is not a load-test-ng users file \("email password" per line[^]*line 1: "user1" is not an email address[^]*line 2: "user2"/.test(
          e.message,
        ),
    );
    assert.deepEqual(calls, [], 'nothing uploaded');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
