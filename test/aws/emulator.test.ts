import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, rm, symlink, writeFile, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { runJanitor } from '../../src/aws/janitor.ts';
import { processRunner } from '../../src/util/command-runner.ts';
import { run as tfOutputs } from '../../src/cli/commands/tf-outputs.ts';
import { startCallLogProxy, type CallLogProxy, type LoggedCall } from './emulator/call-log.ts';
import { iamRequests, recordCreated, type Account, type TagRegistry } from './emulator/iam-requests.ts';
import { startMoto, type Moto } from './emulator/moto.ts';
import { describeDecision, loadPolicy, simulate } from './emulator/simulate.ts';
import { OPENSEARCH_SKIP, writeEmulatorOverrides } from './emulator/skips.ts';

/**
 * infra/aws applied and destroyed with the real AWS provider against moto on
 * 127.0.0.1 (a duet bench, whose resources are a sequential bench's plus slot
 * b's security-group rules, made by the same API calls; one apply and destroy
 * of each would double the test's three minutes) (fake credentials, every endpoint pointed at a logging proxy in
 * front of it), then the janitor against the same emulator. Every API call of
 * the apply and the janitor is logged with its tags and simulated against
 * infra/iam/github-role-policy.json.
 *
 * Needs what scripts/check-infra.sh provides: LOADGATE_INFRA_EMULATOR=1 and
 * TERRAFORM, TF_CLI_CONFIG_FILE, MOTO_VENV. Without LOADGATE_INFRA_EMULATOR the
 * test is skipped (npm test runs without the provider build); with it, a
 * missing tool fails.
 */

const enabled = process.env.LOADGATE_INFRA_EMULATOR === '1';
const skip = enabled ? false : 'LOADGATE_INFRA_EMULATOR is not 1: run scripts/check-infra.sh, which builds Terraform, the AWS provider and moto';

const account: Account = { id: '123456789012', region: 'us-east-1' };
const BUCKET = 'loadgate-emulator-state';
const BENCH = 'lg-emu-1';
const STATE_KEY = 'loadgate/acme/chat/emu/1/terraform.tfstate';
// Already past: the janitor must find this bench expired.
const EXPIRES_AT = '2026-01-01T00:00:00Z';
const CONTROLLER = '198.51.100.7/32';

let moto: Moto;
let proxy: CallLogProxy;
let work: string;
let env: NodeJS.ProcessEnv;
const savedEnv = { ...process.env };
const log = (line: string): void => {
  process.stderr.write(`[emulator] ${line}\n`);
};

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: scripts/check-infra.sh sets it (eval "$(bash scripts/infra-tools.sh)")`);
  return value;
}

function exec(command: string, args: string[], options: { cwd?: string; timeoutMs?: number } = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env, timeout: options.timeoutMs ?? 20 * 60_000, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${error.message}\n${stderr.slice(-4000)}\n${stdout.slice(-4000)}`));
      else resolve({ stdout, stderr });
    });
  });
}

const aws = (...args: string[]): Promise<{ stdout: string; stderr: string }> => exec('aws', [...args, '--region', account.region, '--output', 'json']);

/** Calls logged from `from` on, each with the tags it carried. */
const since = (from: number): LoggedCall[] => proxy.calls.slice(from);

before(async () => {
  if (!enabled) return;
  const terraform = required('TERRAFORM');
  required('TF_CLI_CONFIG_FILE');
  const venv = required('MOTO_VENV');
  for (const binary of [terraform, join(venv, 'bin', 'moto_server'), join(venv, 'bin', 'aws')]) {
    if (!existsSync(binary)) throw new Error(`${binary} is missing: run scripts/check-infra.sh`);
  }
  moto = await startMoto(join(venv, 'bin', 'moto_server'), log);
  proxy = await startCallLogProxy(moto.url);
  work = await mkdtemp(join(tmpdir(), 'loadgate-emulator-'));
  // `terraform` and `aws` as the janitor runs them (by name, from PATH). The AWS
  // CLI v1 ignores AWS_ENDPOINT_URL for RDS, so its wrapper names the endpoint.
  const bin = join(work, 'bin');
  await mkdir(bin);
  await symlink(terraform, join(bin, 'terraform'));
  await writeFile(join(bin, 'aws'), `#!/bin/sh\nexec ${JSON.stringify(join(venv, 'bin', 'aws'))} --endpoint-url ${JSON.stringify(proxy.url)} "$@"\n`);
  await chmod(join(bin, 'aws'), 0o755);
  env = {
    PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
    HOME: work,
    TF_CLI_CONFIG_FILE: process.env.TF_CLI_CONFIG_FILE,
    TF_IN_AUTOMATION: '1',
    CHECKPOINT_DISABLE: '1',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    AWS_REGION: account.region,
    AWS_DEFAULT_REGION: account.region,
    AWS_ENDPOINT_URL: proxy.url,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  // The janitor's processRunner spawns with this process's environment.
  Object.assign(process.env, env);
});

after(async () => {
  for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
  Object.assign(process.env, savedEnv);
  await proxy?.close();
  await moto?.stop();
  if (work) await rm(work, { recursive: true, force: true });
});

test(
  'apply, tf-outputs, tags and security-group paths, the janitor, and every call simulated against the IAM policy',
  { skip, timeout: 40 * 60_000 },
  async () => {
    // --- Setup the account as docs/aws.md does (not simulated: done by a person once).
    await aws('s3api', 'create-bucket', '--bucket', BUCKET);
    await aws('ec2', 'create-key-pair', '--key-name', 'bench-admin');
    const images = JSON.parse((await aws('ec2', 'describe-images', '--owners', 'amazon')).stdout) as { Images: Array<{ ImageId: string }> };
    const ami = images.Images.map((i) => i.ImageId).find((id) => /^ami-[0-9a-f]{8,17}$/.test(id));
    assert.ok(ami, 'moto lists an AMI');

    const infra = join(work, 'infra');
    await cp(join(import.meta.dirname, '..', '..', 'infra', 'aws'), infra, {
      recursive: true,
      filter: (src) => !/[/\\](\.terraform|tests)([/\\]|$)|\.tfstate|\.terraform\.lock\.hcl$/.test(src),
    });
    const skipped = await writeEmulatorOverrides(infra);
    log(`left out of the emulator run: ${[...skipped, OPENSEARCH_SKIP].map((s) => `${s.resource} (${s.reason})`).join('; ')}`);
    const tfvars = {
      region: account.region,
      bench_name: BENCH,
      repository: 'acme/chat',
      run_id: 'emu',
      run_attempt: 1,
      commit_sha: '0123456789abcdef0123456789abcdef01234567',
      state_key: STATE_KEY,
      expires_at: EXPIRES_AT,
      bench: {
        availability_zones: ['us-east-1a', 'us-east-1b'],
        controller_cidr_blocks: [CONTROLLER],
        ssh_cidr_blocks: ['198.51.100.0/24'],
        ssh_key_name: 'bench-admin',
        ami_id: ami,
        app_count: 2,
        agent_count: 2,
        db_count: 2,
        opensearch_count: 0,
        duet: true,
        mattermost_download_url: 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz',
        mattermost_license_secret_arn: `arn:aws:secretsmanager:us-east-1:${account.id}:secret:loadgate/mattermost-license-AbCdEf`,
        db_dump_url: 'https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz',
        db_name: 'ltdb',
      },
    };
    const tfvarsFile = join(work, 'terraform.tfvars.json');
    await writeFile(tfvarsFile, JSON.stringify(tfvars, null, 2));
    // action/provision stores the tfvars beside the state key; the janitor destroys with them.
    await aws('s3', 'cp', tfvarsFile, `s3://${BUCKET}/${STATE_KEY.replace(/terraform\.tfstate$/, 'terraform.tfvars.json')}`);

    // --- Apply.
    const applyFrom = proxy.calls.length;
    const chdir = `-chdir=${infra}`;
    await exec('terraform', [
      chdir,
      'init',
      '-input=false',
      `-backend-config=bucket=${BUCKET}`,
      `-backend-config=key=${STATE_KEY}`,
      `-backend-config=region=${account.region}`,
    ]);
    await exec('terraform', [chdir, 'apply', '-input=false', '-auto-approve', `-var-file=${tfvarsFile}`]);
    const applyCalls = since(applyFrom);
    log(`apply made ${applyCalls.length} API calls`);

    // --- The outputs through the real tf-outputs command.
    const outputs = (await exec('terraform', [chdir, 'output', '-json'])).stdout;
    const printed: string[] = [];
    const code = await tfOutputs(['-'], { out: (l) => printed.push(l), err: (l) => printed.push(l) }, Readable.from([outputs]));
    assert.equal(code, 0);
    const bench = JSON.parse(printed.join('\n')) as {
      benchName: string;
      agents: { apiPort: number; instanceIds: string[] };
      app: { instanceIds: string[] };
      metrics: { pyroscopeUrl: string };
      duetSlots: Array<{ slot: string; proxyUrl: string; prometheusUrl: string; appPort: number; metricsPort: number; agentIndices: number[] }>;
    };
    assert.equal(bench.benchName, BENCH);
    // The duet's two slots: slot b behind the proxy's :8080 and the second Prometheus, one agent each.
    assert.deepEqual(
      bench.duetSlots.map((s) => [s.slot, new URL(s.proxyUrl).port, new URL(s.prometheusUrl).port, s.appPort, s.metricsPort, s.agentIndices]),
      [
        ['a', '', '9090', 8065, 8067, [0]],
        ['b', '8080', '9091', 8165, 8167, [1]],
      ],
    );
    assert.equal(bench.agents.apiPort, 6565, "k6's REST API port");
    assert.equal(bench.agents.instanceIds.length, 2);
    assert.equal(bench.app.instanceIds.length, 2);

    // --- The bench's own expiry: the nodes terminate when they power off, and the
    // schedules that delete Aurora and the NAT gateway exist, at the expiry and after it,
    // as the bench's role (no OpenSearch domain here: OPENSEARCH_SKIP).
    for (const id of [...bench.app.instanceIds, ...bench.agents.instanceIds]) {
      const attribute = JSON.parse(
        (await aws('ec2', 'describe-instance-attribute', '--instance-id', id, '--attribute', 'instanceInitiatedShutdownBehavior')).stdout,
      ) as {
        InstanceInitiatedShutdownBehavior: { Value: string };
      };
      assert.equal(attribute.InstanceInitiatedShutdownBehavior.Value, 'terminate', `${id} terminates when it powers itself off`);
    }
    const nat = JSON.parse((await aws('ec2', 'describe-nat-gateways', '--filter', `Name=tag:Bench,Values=${BENCH}`)).stdout) as {
      NatGateways: Array<{ NatGatewayId: string }>;
    };
    const listed = JSON.parse((await aws('scheduler', 'list-schedules', '--group-name', BENCH)).stdout) as { Schedules: Array<{ Name: string }> };
    const schedules = new Map<string, { ScheduleExpression: string; Target: { Arn: string; RoleArn: string; Input: string } }>();
    for (const { Name } of listed.Schedules)
      schedules.set(Name, JSON.parse((await aws('scheduler', 'get-schedule', '--group-name', BENCH, '--name', Name)).stdout));
    assert.deepEqual([...schedules].map(([name, s]) => [name, s.ScheduleExpression, s.Target.Arn.replace(/^.*:/, ''), JSON.parse(s.Target.Input)]).sort(), [
      ['db-cluster', 'at(2026-01-01T00:30:00)', 'deleteDBCluster', { DBClusterIdentifier: BENCH, SkipFinalSnapshot: true }],
      ['db-cluster-again', 'at(2026-01-01T02:00:00)', 'deleteDBCluster', { DBClusterIdentifier: BENCH, SkipFinalSnapshot: true }],
      [
        'db-instance-0',
        'at(2026-01-01T00:00:00)',
        'deleteDBInstance',
        { DBInstanceIdentifier: `${BENCH}-0`, SkipFinalSnapshot: true, DeleteAutomatedBackups: true },
      ],
      [
        'db-instance-1',
        'at(2026-01-01T00:00:00)',
        'deleteDBInstance',
        { DBInstanceIdentifier: `${BENCH}-1`, SkipFinalSnapshot: true, DeleteAutomatedBackups: true },
      ],
      ['nat-gateway', 'at(2026-01-01T00:00:00)', 'deleteNatGateway', { NatGatewayId: nat.NatGateways[0]?.NatGatewayId }],
    ]);
    assert.ok(
      [...schedules.values()].every((s) => s.Target.RoleArn === `arn:aws:iam::${account.id}:role/${BENCH}-expiry`),
      "every schedule runs as the bench's expiry role",
    );

    // --- Every created resource carries the run's tags, ExpiresAt included (as the request sent them).
    const creates = applyCalls.filter((c) => c.status < 300 && /^(Create|RunInstances|AllocateAddress|Authorize)/.test(c.action) && c.action !== 'CreateTags');
    const untagged = creates.filter((c) => c.requestTags.ExpiresAt !== EXPIRES_AT || c.requestTags.Project !== 'loadgate' || c.requestTags.Bench !== BENCH);
    // KMS aliases, IAM policy attachments, route-table routes and schedules (their group is tagged) take no tags.
    const untaggable = /^(CreateAlias|CreateRoute|AttachRolePolicy|PutRolePolicy|AddRoleToInstanceProfile|CreateSubnetCidrReservation|CreateSchedule)$/;
    assert.deepEqual(
      untagged.filter((c) => !untaggable.test(c.action)).map((c) => `${c.service} ${c.action}`),
      [],
      'every create carries Project, Bench and ExpiresAt',
    );

    // --- The security-group paths the bench needs, read back from the emulator.
    const rules = JSON.parse((await aws('ec2', 'describe-security-group-rules')).stdout) as {
      SecurityGroupRules: Array<{
        GroupId: string;
        IsEgress: boolean;
        FromPort: number;
        ToPort: number;
        CidrIpv4?: string;
        ReferencedGroupInfo?: { GroupId: string };
      }>;
    };
    const groups = JSON.parse((await aws('ec2', 'describe-security-groups', '--filters', `Name=tag:Bench,Values=${BENCH}`)).stdout) as {
      SecurityGroups: Array<{ GroupId: string; GroupName: string }>;
    };
    const groupName = new Map(groups.SecurityGroups.map((g) => [g.GroupId, g.GroupName.replace(`${BENCH}-`, '')]));
    const paths = new Set(
      rules.SecurityGroupRules.filter((r) => !r.IsEgress && groupName.has(r.GroupId)).map(
        (r) => `${r.CidrIpv4 ?? groupName.get(r.ReferencedGroupInfo?.GroupId ?? '') ?? '?'} -> ${groupName.get(r.GroupId)}:${r.FromPort}`,
      ),
    );
    for (const path of [
      `${CONTROLLER} -> metrics:9090`,
      `${CONTROLLER} -> metrics:3000`,
      `${CONTROLLER} -> metrics:4040`,
      `${CONTROLLER} -> agent:6565`,
      'agent -> metrics:9090',
      'metrics -> agent:6566',
      'agent -> proxy:80',
      'proxy -> app:8065',
      'agent -> app:8065',
      'metrics -> app:8067',
      'app -> app:8074',
      'app -> db:5432',
      'metrics -> app:9100',
      '198.51.100.0/24 -> agent:22',
      // Slot b of the duet.
      `${CONTROLLER} -> metrics:9091`,
      'agent -> metrics:9091',
      'agent -> proxy:8080',
      'proxy -> app:8165',
      'agent -> app:8165',
      'metrics -> app:8167',
      'app -> app:8174',
    ]) {
      assert.ok(paths.has(path), `security groups allow ${path}; they allow: ${[...paths].sort().join(', ')}`);
    }
    assert.equal(new URL(bench.metrics.pyroscopeUrl).port, '4040');

    // --- The janitor finds the expired bench and destroys it.
    const janitorFrom = proxy.calls.length;
    const lines: string[] = [];
    const report = await runJanitor(processRunner, {
      regions: [account.region],
      stateRegion: account.region,
      bucket: BUCKET,
      infraDir: infra,
      now: new Date('2026-06-01T00:00:00Z'),
      dryRun: false,
      log: (l) => lines.push(l),
      sleep: async () => {},
    });
    const janitorCalls = since(janitorFrom);
    log(`janitor made ${janitorCalls.length} API calls:\n  ${lines.join('\n  ')}`);
    assert.deepEqual(report.expired, [BENCH], lines.join('\n'));
    assert.deepEqual(report.destroyedWithTerraform, [BENCH], lines.join('\n'));
    assert.deepEqual(report.failures, []);

    // --- Every call of the apply and the janitor, simulated against the policy file.
    const registry: TagRegistry = new Map();
    const unknown: string[] = [];
    const requests = [...applyCalls, ...janitorCalls].flatMap((c) => {
      const made = iamRequests(c, account, registry);
      recordCreated(c, registry);
      if (!made) unknown.push(`${c.service} ${c.action} ${JSON.stringify(c.params).slice(0, 200)}`);
      return made ?? [];
    });
    const logFile = process.env.LOADGATE_INFRA_CALL_LOG;
    if (logFile) {
      const lines = [...applyCalls.map((c) => ({ phase: 'apply', c })), ...janitorCalls.map((c) => ({ phase: 'janitor', c }))].map(({ phase, c }) =>
        JSON.stringify({ phase, service: c.service, action: c.action, status: c.status, tags: c.requestTags }),
      );
      await writeFile(logFile, `${lines.join('\n')}\n`);
      // Everything, for replaying the IAM simulation without the emulator.
      await writeFile(`${logFile}.full.json`, JSON.stringify({ apply: applyCalls, janitor: janitorCalls }));
      log(`call log: ${logFile}`);
    }
    assert.deepEqual(unknown, [], 'the IAM model knows every call made');
    const decisions = await simulate(loadPolicy(account, BUCKET), account, requests);
    const denied = decisions.filter((d) => d.result !== 'Allowed').map(describeDecision);
    log(`${decisions.length} IAM requests simulated from ${applyCalls.length + janitorCalls.length} calls, ${denied.length} denied`);
    assert.deepEqual(denied, [], 'infra/iam/github-role-policy.json allows every call');
    // --- Nothing of the bench is left, listed by tag (KMS keys wait out their deletion window).
    const left = JSON.parse((await aws('resourcegroupstaggingapi', 'get-resources', '--tag-filters', `Key=Bench,Values=${BENCH}`)).stdout) as {
      ResourceTagMappingList: Array<{ ResourceARN: string }>;
    };
    // Terminated instances and deleted NAT gateways stay listed for a while (in AWS
    // too); moto also keeps the cluster's automated snapshot (rds:...), which AWS
    // deletes with the cluster. Anything else is a leftover.
    const remaining: string[] = [];
    for (const arn of left.ResourceTagMappingList.map((m) => m.ResourceARN).filter((a) => !/:kms:/.test(a))) {
      const id = arn.split('/').pop() ?? '';
      if (/:instance\/i-/.test(arn)) {
        const state = JSON.parse((await aws('ec2', 'describe-instances', '--instance-ids', id)).stdout) as {
          Reservations: Array<{ Instances: Array<{ State: { Name: string } }> }>;
        };
        if (state.Reservations.every((r) => r.Instances.every((i) => i.State.Name === 'terminated'))) continue;
      } else if (/:natgateway\/nat-/.test(arn)) {
        const state = JSON.parse((await aws('ec2', 'describe-nat-gateways', '--nat-gateway-ids', id)).stdout) as { NatGateways: Array<{ State: string }> };
        if (state.NatGateways.every((n) => n.State === 'deleted')) continue;
      } else if (/:cluster-snapshot:rds:/.test(arn)) {
        continue;
      }
      remaining.push(arn);
    }
    assert.deepEqual(remaining, [], 'no resource of the bench is left');
    // The tagging API does not list schedule groups: teardown deleted the expiry schedules with their group.
    const scheduleGroups = JSON.parse((await aws('scheduler', 'list-schedule-groups')).stdout) as { ScheduleGroups: Array<{ Name: string }> };
    assert.deepEqual(
      scheduleGroups.ScheduleGroups.map((g) => g.Name).filter((n) => n === BENCH),
      [],
      'the expiry schedules went with the bench',
    );
    for (const arn of left.ResourceTagMappingList.map((m) => m.ResourceARN).filter((a) => /:kms:[^:]*:[^:]*:key\//.test(a))) {
      const state = JSON.parse((await aws('kms', 'describe-key', '--key-id', arn)).stdout) as { KeyMetadata: { KeyState: string } };
      assert.equal(state.KeyMetadata.KeyState, 'PendingDeletion', `${arn} is scheduled for deletion`);
    }
  },
);
