import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type { RemoteShell } from '../../src/bench/aws/remote-shell.ts';
import type { CommandRunner } from '../../src/util/command-runner.ts';
import { SsmError, SsmStandin } from './ssm-standin.ts';
import { answerAccountCall, type AwsAccount } from './aws-account-standin.ts';

/**
 * `aws`, `terraform` and `curl` for workflow steps that run under act on this machine:
 * small executables on PATH that post their arguments to this process, which answers as
 * the real tools would for the calls loadgate's actions make, and records every call with
 * the job (GITHUB_JOB) that made it. Behind them, a bench that lives on loopback:
 *
 * - `aws ssm send-command` / `list-command-invocations` / `get-command-invocation` /
 *   `cancel-command`: SSM Run Command with its output limits (test/support/ssm-standin.ts),
 *   executing the script through `shell`;
 * - `aws secretsmanager ...`: answered by `secrets` (the bench's Secrets Manager);
 * - `aws s3 cp` and `aws s3api head-object`: an in-memory bucket; a missing key answers as
 *   S3 does through the CLI, "An error occurred (404) when calling the HeadObject
 *   operation: Not Found", which action/lib/teardown.sh tells apart from other failures;
 * - `terraform init` (the S3 backend's key), `apply` (writes the state object under that
 *   key, as the S3 backend does), `output -json` (the bench's outputs), `destroy`;
 * - `aws ec2 authorize-security-group-ingress` / `revoke-security-group-ingress`: the bench's
 *   security groups. Terraform's apply creates the controller rules (output
 *   controller_ingress, one per controller_cidr_blocks entry, as infra/aws/modules/bench
 *   does); authorize adds a rule and answers as EC2 does ({Return, SecurityGroupRules:
 *   [{SecurityGroupRuleId, ...}]}, AWS SDK AuthorizeSecurityGroupIngressCommandOutput), or
 *   fails with InvalidPermission.Duplicate for a rule that exists; revoke removes rules by
 *   id. `admits` answers whether a source address may reach a port, for the bench's
 *   firewalls (test/support/bench-firewall.ts); destroy removes the groups.
 * - `aws ec2 create-tags`: a run job moving its bench's ExpiresAt (src/bench/aws/expiry.ts);
 *   recorded in `expiryTags`, answered as the CLI does on success (no output);
 * - `aws scheduler list-schedules` / `get-schedule` / `update-schedule`: the bench's database
 *   expiry schedules, which Terraform's apply creates in the group named after the bench
 *   (infra/aws/modules/expiry: one per database instance at expires_at, the cluster 30
 *   minutes and 2 hours later) and a run job moves with the tag; kept in `expirySchedules`;
 * - `aws service-quotas get-service-quota` / `get-aws-default-service-quota` and `aws ec2
 *   describe-instances`: the account's quota and running instances, answered by
 *   test/support/aws-account-standin.ts, which carries the CLI's and the services' rules
 *   (`account`; by default a quota raised to 256 vCPUs in us-east-1, nothing running);
 * - `curl https://checkip.amazonaws.com`: the public address of the runner that asks, a
 *   documentation address (RFC 5737) per runner (its RUNNER_TEMP: under act every job has
 *   its own, as on GitHub every job has its own runner); any other URL fails, so nothing
 *   leaves the machine.
 */

export interface ToolCall {
  tool: 'aws' | 'terraform' | 'curl';
  args: string[];
  /** GITHUB_JOB of the step that ran it (the called workflow's job id). */
  job: string;
  /** RUNNER_TEMP of the step that ran it: one per job, i.e. per runner. */
  runner: string;
  atMs: number;
}

/** An ingress rule of the bench's security groups. */
export interface IngressRule {
  id: string;
  groupId: string;
  protocol: string;
  fromPort: number;
  toPort: number;
  cidr: string;
  /** terraform for the applied rules, else the job that authorized it. */
  by: string;
}

export interface TerraformRun {
  command: 'init' | 'apply' | 'destroy';
  job: string;
  /** The S3 backend key from init's -backend-config=key=... */
  key: string | undefined;
  /** apply and destroy: the variables file's JSON. */
  vars?: Record<string, unknown>;
}

export interface AwsCliStandin {
  /** Put first on PATH. */
  binDir: string;
  calls: ToolCall[];
  terraform: TerraformRun[];
  /** s3://bucket/key → bytes */
  objects: Map<string, Buffer>;
  /** The bench's security-group ingress rules now. */
  rules: IngressRule[];
  /** Every rule ever authorized by a workflow job (revoked ones included), with when it was revoked. */
  authorized: (IngressRule & { revokedBy?: string })[];
  /** Every ExpiresAt a job tagged instances with, and the job. */
  expiryTags: { job: string; resources: string[]; value: string }[];
  /** The bench's database expiry schedules by name: their at() expressions now. */
  readonly expirySchedules: Map<string, string>;
  /** The public address of the runner with this RUNNER_TEMP. */
  addressOf(runner: string): string;
  /** Whether a rule admits `address` to TCP `port` of any of the bench's groups. */
  admits(address: string, port: number): boolean;
  close(): Promise<void>;
}

const callSchema = z.object({
  tool: z.enum(['aws', 'terraform', 'curl']),
  args: z.array(z.string()),
  cwd: z.string(),
  job: z.string(),
  runner: z.string(),
});

type Answer = { code: number; stdout: string; stderr: string };
const ok = (stdout = ''): Answer => ({ code: 0, stdout, stderr: '' });
const fail = (stderr: string, code = 1): Answer => ({ code, stdout: '', stderr: `${stderr}\n` });

/** The value after `--name`, or after `-name=` for Terraform's single-dash flags. */
function option(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(name);
  if (i >= 0) return args[i + 1];
  const prefix = `${name}=`;
  return args.find((a) => a.startsWith(prefix))?.slice(prefix.length);
}

/** Values after `--name` up to the next option (`--instance-ids a b c`). */
function values(args: readonly string[], name: string): string[] {
  const i = args.indexOf(name);
  if (i < 0) return [];
  const rest = args.slice(i + 1);
  const end = rest.findIndex((a) => a.startsWith('--'));
  return end < 0 ? rest : rest.slice(0, end);
}

const CLIENT = (url: string, tool: string) => `#!/usr/bin/env node
// ${tool} stand-in (test/support/aws-cli-standin.ts): asks the test process.
const body = JSON.stringify({ tool: ${JSON.stringify(tool)}, args: process.argv.slice(2), cwd: process.cwd(), job: process.env.GITHUB_JOB || '', runner: process.env.RUNNER_TEMP || '' });
fetch(${JSON.stringify(url)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
  .then((r) => r.json())
  .then((a) => { process.stdout.write(a.stdout); process.stderr.write(a.stderr); process.exitCode = a.code; })
  .catch((e) => { process.stderr.write('${tool} stand-in unreachable: ' + e.message + '\\n'); process.exitCode = 255; });
`;

/** EventBridge Scheduler's schedules of the bench, in the AWS CLI's JSON shapes. */
function expiryScheduler() {
  const schedules = new Map<string, Record<string, unknown>>();
  let group = '';
  const at = (iso: string, minutes: number) => `at(${new Date(Date.parse(iso) + minutes * 60_000).toISOString().slice(0, 19)})`;
  const notFound = (operation: string, what: string) =>
    fail(`An error occurred (ResourceNotFoundException) when calling the ${operation} operation: ${what} does not exist.`, 254);
  return {
    schedules,
    apply(vars: Record<string, unknown>): void {
      const v = z.object({ bench_name: z.string(), expires_at: z.string(), bench: z.object({ db_count: z.number().int().default(2) }) }).parse(vars);
      group = v.bench_name;
      schedules.clear();
      const add = (name: string, expression: string, action: string, input: object) =>
        schedules.set(name, {
          Name: name,
          GroupName: group,
          ScheduleExpression: expression,
          ScheduleExpressionTimezone: 'UTC',
          State: 'ENABLED',
          ActionAfterCompletion: 'NONE',
          FlexibleTimeWindow: { Mode: 'OFF' },
          Target: { Arn: `arn:aws:scheduler:::aws-sdk:rds:${action}`, RoleArn: `arn:aws:iam::123456789012:role/${group}-expiry`, Input: JSON.stringify(input) },
        });
      for (let i = 0; i < v.bench.db_count; i++) add(`db-instance-${i}`, at(v.expires_at, 0), 'deleteDBInstance', { DBInstanceIdentifier: `${group}-${i}` });
      add('db-cluster', at(v.expires_at, 30), 'deleteDBCluster', { DBClusterIdentifier: group, SkipFinalSnapshot: true });
      add('db-cluster-again', at(v.expires_at, 120), 'deleteDBCluster', { DBClusterIdentifier: group, SkipFinalSnapshot: true });
    },
    destroy(): void {
      schedules.clear();
      group = '';
    },
    answer(operation: string | undefined, args: readonly string[]): Answer {
      const groupName = option(args, '--group-name');
      if (operation === 'list-schedules') {
        if (!group || groupName !== group) return notFound('ListSchedules', `Schedule group ${groupName}`);
        return ok(JSON.stringify({ Schedules: [...schedules.keys()].map((Name) => ({ Name, GroupName: group })) }));
      }
      if (operation === 'get-schedule') {
        const found = groupName === group ? schedules.get(option(args, '--name') ?? '') : undefined;
        return found ? ok(JSON.stringify(found)) : notFound('GetSchedule', `Schedule ${option(args, '--name')}`);
      }
      if (operation === 'update-schedule') {
        const input = z
          .object({ Name: z.string(), GroupName: z.string(), ScheduleExpression: z.string().regex(/^at\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\)$/) })
          .passthrough()
          .safeParse(JSON.parse(option(args, '--cli-input-json') ?? '{}'));
        if (!input.success) return fail(`Parameter validation failed: ${input.error.issues[0]?.message}`, 252);
        if (input.data.GroupName !== group || !schedules.has(input.data.Name)) return notFound('UpdateSchedule', `Schedule ${input.data.Name}`);
        schedules.set(input.data.Name, input.data);
        return ok(JSON.stringify({ ScheduleArn: `arn:aws:scheduler:us-east-1:123456789012:schedule/${group}/${input.data.Name}` }));
      }
      return fail(`An error occurred (AccessDenied) when calling scheduler ${operation}: not stood in`, 254);
    },
  };
}

/** An account whose on-demand vCPU quota was raised for benches in us-east-1, with nothing running. */
const BENCH_ACCOUNT: AwsAccount = { standardVcpus: { default: 32, applied: { 'us-east-1': 256 } } };

export async function startAwsCliStandin(o: {
  shell: RemoteShell;
  secrets: CommandRunner;
  terraformOutputs: unknown;
  account?: AwsAccount;
}): Promise<AwsCliStandin> {
  const binDir = await mkdtemp(join(tmpdir(), 'loadgate-aws-cli-'));
  const calls: ToolCall[] = [];
  const terraform: TerraformRun[] = [];
  const objects = new Map<string, Buffer>();
  const ssm = new SsmStandin(o.shell);
  // Terraform keeps the backend chosen by init in the working directory (.terraform).
  const backends = new Map<string, { bucket: string; key: string }>();
  const rules: IngressRule[] = [];
  const authorized: (IngressRule & { revokedBy?: string })[] = [];
  const expiryTags: AwsCliStandin['expiryTags'] = [];
  const scheduler = expiryScheduler();
  let nextRule = 1;
  const ruleId = () => `sgr-${(nextRule++).toString(16).padStart(17, '0')}`;
  const runners = new Map<string, string>();
  const addressOf = (runner: string): string => {
    if (!runners.has(runner)) runners.set(runner, `203.0.113.${11 + runners.size}`);
    return runners.get(runner) as string;
  };
  const inCidr = (address: string, cidr: string): boolean => {
    const [base, bits] = cidr.split('/');
    const n = (a: string) => a.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
    const size = 2 ** (32 - Number(bits));
    return Math.floor(n(address) / size) === Math.floor(n(base as string) / size);
  };
  const admits = (address: string, port: number): boolean =>
    rules.some((r) => r.protocol === 'tcp' && r.fromPort <= port && port <= r.toPort && inCidr(address, r.cidr));
  const controllerIngress = z
    .array(z.object({ security_group_id: z.string(), ip_protocol: z.string(), from_port: z.number(), to_port: z.number() }))
    .parse((o.terraformOutputs as { controller_ingress?: { value?: unknown } }).controller_ingress?.value ?? []);
  const groups = new Set(controllerIngress.map((r) => r.security_group_id));

  const s3Url = (bucket: string, key: string) => `s3://${bucket}/${key}`;
  const notFound = () => fail('An error occurred (404) when calling the HeadObject operation: Not Found', 254);

  async function aws(args: string[], cwd: string, job: string): Promise<Answer> {
    const [service, operation] = args;
    const path = (p: string) => (isAbsolute(p) ? p : resolve(cwd, p));
    if (service === 's3' && operation === 'cp') {
      const positional: string[] = [];
      for (let i = 2; i < args.length; i++) {
        const arg = args[i] as string;
        if (arg === '--region' || arg === '--profile') i++;
        else if (!arg.startsWith('--')) positional.push(arg);
      }
      const [from, to] = positional;
      if (!from || !to) return fail('usage: aws s3 cp <from> <to>', 252);
      if (to.startsWith('s3://')) {
        objects.set(to, await readFile(path(from)));
        return ok();
      }
      const object = objects.get(from);
      if (!object)
        return fail(`fatal error: An error occurred (404) when calling the HeadObject operation: Key "${from.replace(/^s3:\/\/[^/]+\//, '')}" does not exist`);
      await writeFile(path(to), object);
      return ok();
    }
    if (service === 's3api' && operation === 'head-object') {
      const url = s3Url(option(args, '--bucket') ?? '', option(args, '--key') ?? '');
      return objects.has(url) ? ok(JSON.stringify({ ContentLength: objects.get(url)?.length })) : notFound();
    }
    if (service === 'ssm') {
      try {
        const commandId = option(args, '--command-id') ?? '';
        if (operation === 'send-command') {
          const parameters = JSON.parse(option(args, '--parameters') ?? '{}') as { commands?: string[]; executionTimeout?: string[] };
          const id = ssm.sendCommand(values(args, '--instance-ids'), parameters.commands?.[0], Number(parameters.executionTimeout?.[0] ?? 3600));
          return ok(
            JSON.stringify({ Command: { CommandId: id, DocumentName: 'AWS-RunShellScript', InstanceIds: values(args, '--instance-ids'), Status: 'Pending' } }),
          );
        }
        if (operation === 'list-command-invocations') return ok(JSON.stringify(ssm.listCommandInvocations(commandId, args.includes('--details'))));
        if (operation === 'get-command-invocation') return ok(JSON.stringify(ssm.getCommandInvocation(commandId, option(args, '--instance-id') ?? '')));
      } catch (error) {
        if (error instanceof SsmError) return fail(error.message, 254);
        throw error;
      }
    }
    if (service === 'ssm' && operation === 'cancel-command') return ok('{}');
    if (service === 'ec2' && operation === 'authorize-security-group-ingress') {
      const groupId = option(args, '--group-id') ?? '';
      if (!groups.has(groupId))
        return fail(
          `An error occurred (InvalidGroup.NotFound) when calling the AuthorizeSecurityGroupIngress operation: The security group '${groupId}' does not exist`,
          254,
        );
      // The role creates only what is tagged Project=loadgate (infra/iam/github-role-policy.json, CreateTagged).
      const tagged = z
        .array(z.object({ ResourceType: z.string(), Tags: z.array(z.object({ Key: z.string(), Value: z.string() })) }))
        .parse(JSON.parse(option(args, '--tag-specifications') ?? '[]'))
        .some((t) => t.ResourceType === 'security-group-rule' && t.Tags.some((tag) => tag.Key === 'Project' && tag.Value === 'loadgate'));
      if (!tagged)
        return fail(
          'An error occurred (UnauthorizedOperation) when calling the AuthorizeSecurityGroupIngress operation: You are not authorized to perform this operation (the rule carries no Project=loadgate tag)',
          254,
        );
      const permissions = z
        .array(
          z.object({
            IpProtocol: z.string(),
            FromPort: z.number(),
            ToPort: z.number(),
            IpRanges: z.array(z.object({ CidrIp: z.string(), Description: z.string().optional() })),
          }),
        )
        .parse(JSON.parse(option(args, '--ip-permissions') ?? '[]'));
      const added: IngressRule[] = [];
      for (const p of permissions) {
        for (const range of p.IpRanges) {
          const rule = { id: '', groupId, protocol: p.IpProtocol, fromPort: p.FromPort, toPort: p.ToPort, cidr: range.CidrIp, by: job };
          if (
            rules.some(
              (r) => r.groupId === groupId && r.protocol === rule.protocol && r.fromPort === rule.fromPort && r.toPort === rule.toPort && r.cidr === rule.cidr,
            )
          ) {
            return fail(
              `An error occurred (InvalidPermission.Duplicate) when calling the AuthorizeSecurityGroupIngress operation: the specified rule "peer: ${rule.cidr}, TCP, from port: ${rule.fromPort}, to port: ${rule.toPort}, ALLOW" already exists`,
              254,
            );
          }
          added.push({ ...rule, id: ruleId() });
        }
      }
      rules.push(...added);
      authorized.push(...added.map((r) => ({ ...r })));
      return ok(
        JSON.stringify({
          Return: true,
          SecurityGroupRules: added.map((r) => ({
            SecurityGroupRuleId: r.id,
            GroupId: r.groupId,
            GroupOwnerId: '123456789012',
            IsEgress: false,
            IpProtocol: r.protocol,
            FromPort: r.fromPort,
            ToPort: r.toPort,
            CidrIpv4: r.cidr,
          })),
        }),
      );
    }
    if (service === 'ec2' && operation === 'revoke-security-group-ingress') {
      const groupId = option(args, '--group-id') ?? '';
      const ids = values(args, '--security-group-rule-ids');
      for (const id of ids) {
        if (!rules.some((r) => r.id === id && r.groupId === groupId))
          return fail(
            `An error occurred (InvalidSecurityGroupRuleId.NotFound) when calling the RevokeSecurityGroupIngress operation: The security group rule ID '${id}' does not exist`,
            254,
          );
      }
      for (const id of ids) {
        rules.splice(
          rules.findIndex((r) => r.id === id),
          1,
        );
        const record = authorized.find((r) => r.id === id);
        if (record) record.revokedBy = job;
      }
      return ok(JSON.stringify({ Return: true }));
    }
    if (service === 'ec2' && operation === 'create-tags') {
      const resources = values(args, '--resources');
      const value = /^Key=ExpiresAt,Value=(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)$/.exec(option(args, '--tags') ?? '')?.[1];
      if (!resources.length || !resources.every((id) => /^i-[0-9a-f]{8,17}$/.test(id)) || !value)
        return fail('An error occurred (InvalidParameterValue) when calling the CreateTags operation: not an ExpiresAt tag on instances', 254);
      expiryTags.push({ job, resources, value });
      return ok('');
    }
    if (service === 'scheduler') return scheduler.answer(operation, args);
    if (service === 'secretsmanager') return o.secrets.run('aws', args);
    const accountAnswer = answerAccountCall(o.account ?? BENCH_ACCOUNT, args);
    if (accountAnswer) return accountAnswer;
    return fail(`An error occurred (AccessDenied) when calling ${service} ${operation}: not stood in`, 254);
  }

  async function tf(args: string[], cwd: string, job: string): Promise<Answer> {
    const chdir = option(args, '-chdir');
    const dir = resolve(cwd, chdir ?? '.');
    const rest = args.filter((a) => !a.startsWith('-chdir='));
    const command = rest[0];
    const varsOf = async () => {
      const file = option(rest, '-var-file');
      return file ? (JSON.parse(await readFile(resolve(cwd, file), 'utf8')) as Record<string, unknown>) : undefined;
    };
    if (command === 'init') {
      const config = new Map(
        rest.filter((a) => a.startsWith('-backend-config=')).map((a) => a.slice('-backend-config='.length).split('=', 2) as [string, string]),
      );
      const bucket = config.get('bucket');
      const key = config.get('key');
      if (!bucket || !key) return fail('Error: Missing required argument: the S3 backend needs bucket and key');
      backends.set(dir, { bucket, key });
      terraform.push({ command, job, key });
      return ok('Terraform has been successfully initialized!\n');
    }
    const backend = backends.get(dir);
    if (command === 'apply' || command === 'destroy') {
      if (!backend) return fail('Error: Backend initialization required, please run "terraform init"');
      const vars = await varsOf();
      if (!vars) return fail('Error: No value for required variable');
      terraform.push({ command, job, key: backend.key, vars });
      const state = s3Url(backend.bucket, backend.key);
      if (command === 'apply') {
        objects.set(state, Buffer.from(JSON.stringify({ version: 4, outputs: o.terraformOutputs })));
        scheduler.apply(vars);
        // The controller rules infra/aws/modules/bench creates for each controller_cidr_blocks entry
        // (infra/aws passes var.bench.controller_cidr_blocks; the module's default is none).
        const cidrs = z.object({ bench: z.object({ controller_cidr_blocks: z.array(z.string()).default([]) }) }).parse(vars).bench.controller_cidr_blocks;
        for (const cidr of cidrs) {
          for (const r of controllerIngress)
            rules.push({
              id: ruleId(),
              groupId: r.security_group_id,
              protocol: r.ip_protocol,
              fromPort: r.from_port,
              toPort: r.to_port,
              cidr,
              by: 'terraform',
            });
        }
      } else {
        objects.set(state, Buffer.from(JSON.stringify({ version: 4, outputs: {}, resources: [] })));
        // Deleting a group deletes its rules, the ones added outside Terraform too.
        rules.splice(0, rules.length);
        scheduler.destroy();
      }
      return ok(`${command === 'apply' ? 'Apply' : 'Destroy'} complete!\n`);
    }
    if (command === 'output' && rest.includes('-json')) {
      if (!backend || !objects.has(s3Url(backend.bucket, backend.key))) return ok('{}\n');
      return ok(`${JSON.stringify(o.terraformOutputs)}\n`);
    }
    return fail(`terraform stand-in: ${command} is not stood in`);
  }

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = (async (): Promise<Answer> => {
        const call = callSchema.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        calls.push({ tool: call.tool, args: call.args, job: call.job, runner: call.runner, atMs: Date.now() });
        if (call.tool === 'aws') return aws(call.args, call.cwd, call.job);
        if (call.tool === 'terraform') return tf(call.args, call.cwd, call.job);
        return call.args.includes('https://checkip.amazonaws.com')
          ? ok(`${addressOf(call.runner)}\n`)
          : fail(`curl: (6) Could not resolve host (stand-in: no network): ${call.args.at(-1)}`, 6);
      })();
      answer
        .catch((error: Error) => fail(`stand-in error: ${error.message}`, 255))
        .then((a) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a)));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  await mkdir(binDir, { recursive: true });
  for (const tool of ['aws', 'terraform', 'curl']) {
    await writeFile(join(binDir, tool), CLIENT(url, tool));
    await chmod(join(binDir, tool), 0o755);
  }
  return {
    binDir,
    calls,
    terraform,
    objects,
    rules,
    authorized,
    expiryTags,
    get expirySchedules() {
      return new Map([...scheduler.schedules].map(([name, s]) => [name, String(s.ScheduleExpression)]));
    },
    addressOf,
    admits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await rm(binDir, { recursive: true, force: true });
    },
  };
}
