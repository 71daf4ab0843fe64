import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parse } from 'yaml';
import { terraformOutputs } from './fixtures.ts';
import type { AwsAccount } from '../support/aws-account-standin.ts';

/**
 * action/lib/provision.sh and teardown.sh on the AWS bench, run for real with fake `aws`,
 * `terraform` and `curl` on PATH (an S3 bucket in a folder, a log of every call) and the
 * real CLI standing in for the bundle: the tfvars provision applied are stored beside the
 * state and reused by teardown; the state key is recorded before anything is created and
 * teardown uses it even when its own run attempt has moved on.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = pathToFileURL(join(REPO, 'bin', 'loadgate.js')).href;
const LICENSE = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:loadgate/mattermost-license-AbCdEf';
const ACCOUNT_CLI = join(REPO, 'test', 'support', 'aws-account-cli.ts');
/** An account whose on-demand vCPU quota was raised for benches in the bench's region. */
const RAISED: AwsAccount = { standardVcpus: { default: 32, applied: { 'us-east-1': 256 } } };

interface Sandbox {
  root: string;
  s3: string;
  log: string;
  output: string;
  run(script: 'provision' | 'teardown' | 'admit', env: Record<string, string>): { code: number; stdout: string; stderr: string };
  calls(): string[];
  outputs(): Record<string, string>;
  close(): void;
}

function sandbox(): Sandbox {
  const root = mkdtempSync(join(tmpdir(), 'loadgate-actions-'));
  const lib = join(root, 'loadgate', 'action', 'lib');
  mkdirSync(lib, { recursive: true });
  for (const file of ['common.sh', 'provision.sh', 'teardown.sh', 'admit.sh']) copyFileSync(join(REPO, 'action', 'lib', file), join(lib, file));
  mkdirSync(join(root, 'loadgate', 'dist'));
  mkdirSync(join(root, 'loadgate', 'infra', 'aws'), { recursive: true });
  // The bundle is rebuilt elsewhere; the sources' CLI stands in for it.
  // wait-release would ask releases.mattermost.com: with FAKE_WAIT_RELEASE it is only logged.
  writeFileSync(
    join(root, 'loadgate', 'dist', 'loadgate.js'),
    `if (process.argv[2] === 'wait-release' && process.env.FAKE_WAIT_RELEASE) {
  (await import('node:fs')).appendFileSync(process.env.FAKE_LOG, 'loadgate ' + process.argv.slice(2).join(' ') + '\\n');
} else {
  await import(${JSON.stringify(CLI)});
}\n`,
  );
  const s3 = join(root, 's3');
  const bin = join(root, 'bin');
  mkdirSync(s3);
  mkdirSync(bin);
  const log = join(root, 'calls.log');
  const output = join(root, 'github-output');
  writeFileSync(join(root, 'outputs.json'), JSON.stringify(terraformOutputs()));
  const fake = (name: string, body: string) => {
    writeFileSync(join(bin, name), `#!/bin/bash\nprintf '%s\\n' "${name} $*" >> "$FAKE_LOG"\n${body}\n`);
    chmodSync(join(bin, name), 0o755);
  };
  fake('curl', 'echo 198.51.100.7');
  fake(
    'aws',
    `case "$1 $2" in "service-quotas "* | "ec2 describe-instances") exec node --import tsx ${JSON.stringify(ACCOUNT_CLI)} "$@" ;; esac
if [ "$1" = ec2 ]; then
  group=""; for ((i = 1; i <= $#; i++)); do [ "\${!i}" = --group-id ] && { j=$((i + 1)); group=\${!j}; }; done
  case "$2" in
    authorize-security-group-ingress)
      if [ "$group" = "\${FAKE_DUPLICATE_GROUP:-}" ]; then echo "An error occurred (InvalidPermission.Duplicate) when calling the AuthorizeSecurityGroupIngress operation: the specified rule already exists" >&2; exit 254; fi
      n=$(($(cat "$FAKE_ROOT/rules" 2>/dev/null || echo 0) + 1)); echo "$n" > "$FAKE_ROOT/rules"
      printf '{"Return":true,"SecurityGroupRules":[{"SecurityGroupRuleId":"sgr-%017d","GroupId":"%s"}]}\n' "$n" "$group" ;;
    revoke-security-group-ingress) echo '{"Return":true}' ;;
    *) echo "An error occurred (AccessDenied): not faked" >&2; exit 254 ;;
  esac
  exit 0
fi
args=("$@"); src=""; dst=""; bucket=""; key=""
for ((i = 0; i < \${#args[@]}; i++)); do
  case "\${args[i]}" in --region) i=$((i + 1)) ;; --bucket) bucket=\${args[i+1]}; i=$((i + 1)) ;; --key) key=\${args[i+1]}; i=$((i + 1)) ;;
    --only-show-errors | s3 | cp | s3api | head-object) ;; *) if [ -z "$src" ]; then src=\${args[i]}; else dst=\${args[i]}; fi ;; esac
done
if [ "$1" = s3api ]; then
  if [ -n "\${FAKE_S3_DENY:-}" ]; then echo "An error occurred (403) when calling the HeadObject operation: Forbidden" >&2; exit 254; fi
  [ -f "$FAKE_S3/$bucket/$key" ] && exit 0; echo "An error occurred (404) when calling the HeadObject operation: Not Found" >&2; exit 254
fi
if [[ "$src" == s3://* ]]; then
  [ -f "$FAKE_S3/\${src#s3://}" ] || { echo "fatal error: An error occurred (404) when calling the HeadObject operation: Key \\"\${src#s3://*/}\\" does not exist" >&2; exit 1; }
  cp "$FAKE_S3/\${src#s3://}" "$dst"
else
  mkdir -p "$(dirname "$FAKE_S3/\${dst#s3://}")"; cp "$src" "$FAKE_S3/\${dst#s3://}"
fi`,
  );
  fake(
    'terraform',
    `for a in "$@"; do case "$a" in -backend-config=key=*) echo "\${a#-backend-config=key=}" > "$FAKE_ROOT/key" ;; -var-file=*) cp "\${a#-var-file=}" "$FAKE_ROOT/last.tfvars.json" ;; esac; done
case " $* " in
  *" apply "*)
    grep -q '^state-key=' "$GITHUB_OUTPUT" || { echo "apply before the state key was recorded" >&2; exit 9; }
    key=$(cat "$FAKE_ROOT/key"); mkdir -p "$(dirname "$FAKE_S3/acme-loadgate-state/$key")"; echo '{"version":4}' > "$FAKE_S3/acme-loadgate-state/$key" ;;
  *" output "*) cat "$FAKE_ROOT/outputs.json" ;;
  # A lock left behind: every destroy fails as Terraform does, until force-unlock names its ID.
  *" destroy "*) if [ -f "$FAKE_ROOT/lock" ]; then cat "$FAKE_ROOT/lock" >&2; exit 1; fi ;;
  *" force-unlock "*)
    if grep -q "ID: *\${@: -1}\$" "$FAKE_ROOT/lock" 2> /dev/null; then rm "$FAKE_ROOT/lock"; echo "Terraform state has been successfully unlocked!"; else echo "Failed to unlock state: lock ID does not match" >&2; exit 1; fi ;;
esac`,
  );
  return {
    root,
    s3,
    log,
    output,
    run(script, env) {
      const result = spawnSync('bash', [join(lib, `${script}.sh`)], {
        cwd: REPO,
        encoding: 'utf8',
        env: {
          PATH: `${bin}:${process.env.PATH}`,
          HOME: root,
          RUNNER_TEMP: join(root, `runner-${script}`),
          GITHUB_OUTPUT: output,
          FAKE_LOG: log,
          FAKE_S3: s3,
          FAKE_ROOT: root,
          GITHUB_REPOSITORY: 'acme/chat',
          GITHUB_RUN_ID: '42',
          GITHUB_SHA: 'a'.repeat(40),
          LG_BENCH: 'aws',
          LG_TF_STATE_BUCKET: 'acme-loadgate-state',
          AWS_REGION: 'us-east-1',
          LG_RELEASE_WAIT: 'off', // wait-release would ask releases.mattermost.com (test/chat-servers/mattermost/release-wait.test.ts covers it)
          FAKE_AWS_ACCOUNT: JSON.stringify(RAISED),
          ...env,
        },
      });
      return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
    },
    calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []),
    outputs: () =>
      Object.fromEntries(
        (existsSync(output) ? readFileSync(output, 'utf8').trim().split('\n') : []).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      ),
    close: () => rmSync(root, { recursive: true, force: true }),
  };
}

const KEY = 'loadgate/acme/chat/42/2/terraform.tfstate';
const TFVARS = 'acme-loadgate-state/loadgate/acme/chat/42/2/terraform.tfvars.json';
const provisionEnv = {
  LG_CONFIG: 'examples/aws-mattermost.yml',
  LG_VERSION: 'v10.12.0',
  GITHUB_RUN_ATTEMPT: '2',
  LG_LICENSE_SECRET_ARN: LICENSE,
  LG_DB_SNAPSHOT: 'lt-12m-610',
  LG_DB_NAME: 'ltdb',
  LG_MAX_COST: '500',
};

test('provision records the state key first, stores the tfvars it applies beside the state, and admits only this runner', { timeout: 120_000 }, () => {
  const box = sandbox();
  try {
    const provision = box.run('provision', provisionEnv);
    assert.equal(provision.code, 0, provision.stderr);
    const outputs = box.outputs();
    assert.equal(outputs['state-key'], KEY);
    assert.ok(outputs['bench-file']?.endsWith('/loadgate/bench.json'));
    const stored = JSON.parse(readFileSync(join(box.s3, TFVARS), 'utf8')) as Record<string, unknown> & { bench: Record<string, unknown> };
    assert.deepEqual(stored.bench.controller_cidr_blocks, ['198.51.100.7/32'], "the runner's own address, detected with checkip");
    assert.equal(stored.bench.mattermost_license_secret_arn, LICENSE);
    assert.equal(stored.bench.db_snapshot_identifier, 'lt-12m-610');
    assert.equal(stored.bench.db_name, 'ltdb');
    assert.equal(stored.state_key, KEY);
    assert.match(String(stored.bench.mattermost_download_url), /\/10\.12\.0\/mattermost-10\.12\.0-linux-amd64\.tar\.gz$/);
    // Applied with exactly what was stored.
    assert.deepEqual(JSON.parse(readFileSync(join(box.root, 'last.tfvars.json'), 'utf8')), stored);
    // The quota first, then upload, init, apply and outputs (the fake apply also checks the key was recorded).
    const steps = box
      .calls()
      .filter((c) => !c.startsWith('curl'))
      .map((c) => (c.startsWith('aws') ? c.split(' ').slice(0, 3).join(' ') : c.split(' ')[2]));
    assert.deepEqual(steps, ['aws service-quotas get-service-quota', 'aws ec2 describe-instances', 'aws s3 cp', 'init', 'apply', 'output']);
    assert.match(provision.stdout, /^Quota: 72 of 256 vCPUs with this bench; 184 to spare\.$/m);
    assert.ok(box.calls().some((c) => c.includes(`-backend-config=key=${KEY}`)));
    const bench = JSON.parse(readFileSync(outputs['bench-file'] as string, 'utf8')) as { kind: string };
    assert.equal(bench.kind, 'aws');

    // Over budget: refused before anything is created.
    const poor = sandbox();
    try {
      const refused = poor.run('provision', { ...provisionEnv, LG_MAX_COST: '1' });
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, /REFUSED: the worst case \$[0-9.]+ .*exceeds the max-cost of \$1\.00/);
      assert.ok(!poor.calls().some((c) => c.startsWith('terraform') || c.startsWith('aws')));
    } finally {
      poor.close();
    }
  } finally {
    box.close();
  }
});

test("provision refuses a bench over the account's vCPU quota before anything exists, naming the quota and how to raise it", { timeout: 120_000 }, () => {
  const box = sandbox();
  try {
    // No value applied (the default of 32 holds), and two on-demand c7i.xlarge already running:
    // 8 vCPUs. The stopped, spot, GPU and other-region instances take none of this quota.
    const c7iXlarge = { type: 'c7i.xlarge', region: 'us-east-1', cores: 2, threadsPerCore: 2 } as const;
    const account: AwsAccount = {
      standardVcpus: { default: 32, applied: { 'eu-west-1': 512 } },
      instances: [
        { ...c7iXlarge, state: 'running' },
        { ...c7iXlarge, state: 'pending' },
        { ...c7iXlarge, state: 'stopped' },
        { ...c7iXlarge, state: 'running', spot: true },
        { ...c7iXlarge, state: 'running', region: 'eu-west-1' },
        { type: 'g5.xlarge', region: 'us-east-1', state: 'running', cores: 2, threadsPerCore: 2 },
      ],
    };
    const refused = box.run('provision', { ...provisionEnv, FAKE_AWS_ACCOUNT: JSON.stringify(account) });
    assert.equal(refused.code, 1, refused.stderr);
    assert.match(
      refused.stderr,
      /REFUSED: this bench needs 72 vCPUs of L-1216C47A and 8 are already running in us-east-1, 80 in all, over the quota of 32; nothing was provisioned\./,
    );
    assert.match(refused.stderr, /quota {10}32 vCPUs \(the AWS default: no value applied to this account\)/);
    assert.match(
      refused.stderr,
      /aws service-quotas request-service-quota-increase --service-code ec2 --quota-code L-1216C47A --desired-value 80 --region us-east-1/,
    );
    assert.match(refused.stderr, /https:\/\/us-east-1\.console\.aws\.amazon\.com\/servicequotas\/home\/services\/ec2\/quotas\/L-1216C47A/);
    const calls = box.calls();
    assert.deepEqual(
      calls.filter((c) => c.startsWith('aws service-quotas')).map((c) => c.split(' ')[2]),
      ['get-service-quota', 'get-aws-default-service-quota'],
      'the default, once no value is applied',
    );
    assert.ok(!calls.some((c) => c.startsWith('terraform') || c.startsWith('aws s3')), 'neither apply nor the state upload ran');
    assert.equal(box.outputs()['state-key'], undefined, 'no state key: nothing to tear down');
  } finally {
    box.close();
  }
});

test(
  'provision reads the AWS default quota when none is applied, and says so; a role without the Service Quotas actions is told which',
  { timeout: 120_000 },
  () => {
    const box = sandbox();
    try {
      const fresh: AwsAccount = { standardVcpus: { default: 640 } };
      const provision = box.run('provision', { ...provisionEnv, FAKE_AWS_ACCOUNT: JSON.stringify(fresh) });
      assert.equal(provision.code, 0, provision.stderr);
      assert.match(provision.stdout, /quota {10}640 vCPUs \(the AWS default: no value applied to this account\)/);
      assert.ok(box.calls().some((c) => / apply /.test(c)));

      const denied = sandbox();
      try {
        const refused = denied.run('provision', {
          ...provisionEnv,
          FAKE_AWS_ACCOUNT: JSON.stringify({ ...RAISED, denied: ['servicequotas:GetServiceQuota'] }),
        });
        assert.equal(refused.code, 3);
        assert.match(refused.stderr, /access denied\. The role needs servicequotas:GetServiceQuota \(infra\/iam\/github-role-policy\.json/);
        assert.ok(!denied.calls().some((c) => c.startsWith('terraform')));
      } finally {
        denied.close();
      }
    } finally {
      box.close();
    }
  },
);

test('teardown destroys with the recorded key and the stored tfvars, also when only teardown is re-run', { timeout: 120_000 }, () => {
  const box = sandbox();
  try {
    assert.equal(box.run('provision', provisionEnv).code, 0);
    const stored = readFileSync(join(box.s3, TFVARS), 'utf8');
    writeFileSync(box.log, '');
    // A re-run of only the teardown job: a new attempt, the key from the gate job's outputs.
    const teardown = box.run('teardown', { LG_STATE_KEY: KEY, GITHUB_RUN_ATTEMPT: '3' });
    assert.equal(teardown.code, 0, teardown.stderr);
    const calls = box.calls();
    assert.ok(
      calls.some((c) => c.includes(`-backend-config=key=${KEY}`)),
      'the recorded key, not attempt 3',
    );
    assert.ok(calls.some((c) => / destroy /.test(c)));
    assert.equal(readFileSync(join(box.root, 'last.tfvars.json'), 'utf8'), stored, 'destroyed with what was applied');

    // The tfvars object is gone but the state exists: rebuilt from the config and the key's run identity.
    unlinkSync(join(box.s3, TFVARS));
    writeFileSync(box.log, '');
    const rebuilt = box.run('teardown', { LG_STATE_KEY: KEY, GITHUB_RUN_ATTEMPT: '3', LG_CONFIG: 'examples/aws-mattermost.yml', LG_VERSION: 'v10.12.0' });
    assert.equal(rebuilt.code, 0, rebuilt.stderr);
    assert.match(rebuilt.stdout + rebuilt.stderr, /tfvars are missing/);
    const vars = JSON.parse(readFileSync(join(box.root, 'last.tfvars.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(vars.state_key, KEY);
    assert.equal(vars.run_attempt, 2);
    assert.equal(vars.bench_name, 'lg-42-2');
  } finally {
    box.close();
  }
});

test('teardown with no recorded key and nothing under this attempt destroys nothing; a bad key is refused', { timeout: 60_000 }, () => {
  const box = sandbox();
  try {
    const nothing = box.run('teardown', { GITHUB_RUN_ATTEMPT: '1' });
    assert.equal(nothing.code, 0, nothing.stderr);
    assert.match(nothing.stdout, /nothing to destroy: neither a state nor variables exist under s3:\/\/acme-loadgate-state\/loadgate\/acme\/chat\/42\/1\//);
    assert.match(nothing.stdout + nothing.stderr, /no state-key was recorded/);
    assert.ok(!box.calls().some((c) => c.startsWith('terraform')));
    const bad = box.run('teardown', { LG_STATE_KEY: 'loadgate/../../etc/terraform.tfstate' });
    assert.equal(bad.code, 3);
    assert.match(bad.stderr, /state-key: not a loadgate state key/);
    // An S3 answer other than 404 (here: access denied) is not taken for "nothing there".
    const denied = box.run('teardown', { LG_STATE_KEY: KEY, FAKE_S3_DENY: '1' });
    assert.equal(denied.code, 1);
    assert.match(
      denied.stderr,
      /cannot tell whether s3:\/\/acme-loadgate-state\/loadgate\/acme\/chat\/42\/2\/terraform\.tfstate exists: An error occurred \(403\)/,
    );
    assert.ok(!box.calls().some((c) => c.startsWith('terraform')));
    const badIp = box.run('provision', { ...provisionEnv, LG_CONTROLLER_IP: '198.51.100.7; reboot' });
    assert.equal(badIp.code, 3);
    assert.match(badIp.stderr, /controller address: expected an IPv4 address/);
  } finally {
    box.close();
  }
});

test('provision with admit-runner false admits no one at apply and hands the controller ports to the run jobs', { timeout: 120_000 }, () => {
  const box = sandbox();
  try {
    const provision = box.run('provision', { ...provisionEnv, LG_ADMIT_RUNNER: 'false' });
    assert.equal(provision.code, 0, provision.stderr);
    assert.deepEqual(JSON.parse(readFileSync(join(box.s3, TFVARS), 'utf8')).bench.controller_cidr_blocks, [], 'no controller range at apply');
    assert.ok(!box.calls().some((c) => c.startsWith('curl')), 'no address lookup: this job never talks to the bench');
    assert.deepEqual(JSON.parse(box.outputs()['controller-ingress'] as string), terraformOutputs().controller_ingress?.value);
  } finally {
    box.close();
  }
});

test('admit.sh adds this runner to each controller port, tagged, and withdraws exactly the rules it added', { timeout: 60_000 }, () => {
  const box = sandbox();
  try {
    const ingress = JSON.stringify(terraformOutputs().controller_ingress?.value);
    // The agents' group already admits this address (another rule, not this job's): used, never removed.
    const open = box.run('admit', {
      LG_ADMIT_MODE: 'open',
      LG_CONTROLLER_INGRESS: ingress,
      FAKE_DUPLICATE_GROUP: 'sg-0123456789abcdef2',
      GITHUB_JOB: 'run-aws-1',
    });
    assert.equal(open.code, 0, open.stderr);
    assert.equal(box.outputs().cidr, '198.51.100.7/32', "this runner's own address");
    const authorize = box.calls().filter((c) => c.startsWith('aws ec2 authorize-security-group-ingress'));
    assert.equal(authorize.length, 4, 'one call per controller rule');
    for (const c of authorize) {
      assert.match(c, /"CidrIp":"198\.51\.100\.7\/32"/);
      assert.match(
        c,
        /--tag-specifications \[\{"ResourceType":"security-group-rule","Tags":\[\{"Key":"Project","Value":"loadgate"\}/,
        'tagged Project=loadgate at creation (the IAM policy allows nothing else)',
      );
    }
    assert.match(authorize[0] as string, /--group-id sg-0123456789abcdef1 .*"FromPort":9090,"ToPort":9090/);
    assert.match(open.stdout, /already admitted to sg-0123456789abcdef2/);

    writeFileSync(box.log, '');
    const close = box.run('admit', { LG_ADMIT_MODE: 'close' });
    assert.equal(close.code, 0, close.stderr);
    const revoked = box.calls().map((c) =>
      c
        .match(/revoke-security-group-ingress --region us-east-1 --group-id (\S+) --security-group-rule-ids (\S+)/)
        ?.slice(1)
        .join(' '),
    );
    assert.deepEqual(
      revoked,
      [1, 2, 3].map((n) => `sg-0123456789abcdef1 sgr-${String(n).padStart(17, '0')}`),
      'the three rules it added, not the one it found',
    );
    writeFileSync(box.log, '');
    assert.equal(box.run('admit', { LG_ADMIT_MODE: 'close' }).code, 0);
    assert.deepEqual(box.calls().filter(Boolean), [], 'closing twice withdraws nothing more');

    const forged = box.run('admit', { LG_ADMIT_MODE: 'open', LG_CONTROLLER_INGRESS: '[{"security_group_id":"sg-1; reboot","from_port":1,"to_port":2}]' });
    assert.notEqual(forged.code, 0);
    assert.match(forged.stderr, /not a controller rule/);
  } finally {
    box.close();
  }
});

test('provision waits for the candidate tarball as well as the baseline, and the workflow passes the candidate', { timeout: 120_000 }, () => {
  const box = sandbox();
  try {
    const provision = box.run('provision', { ...provisionEnv, LG_RELEASE_WAIT: 'on', FAKE_WAIT_RELEASE: '1', LG_CANDIDATE: 'v10.13.0-rc1' });
    assert.equal(provision.code, 0, provision.stderr);
    const waits = box.calls().filter((c) => c.startsWith('loadgate wait-release'));
    assert.deepEqual(waits, ['loadgate wait-release --config examples/aws-mattermost.yml --version v10.12.0 --version v10.13.0-rc1']);
    assert.ok(box.calls().indexOf(waits[0] as string) < box.calls().findIndex((c) => c.startsWith('terraform')), 'before anything is provisioned');
  } finally {
    box.close();
  }
  // The composite action maps its candidate input to LG_CANDIDATE, and the workflow's provision job passes it.
  const action = parse(readFileSync(join(REPO, 'action', 'provision', 'action.yml'), 'utf8')) as {
    inputs: Record<string, unknown>;
    runs: { steps: Array<{ env: Record<string, string> }> };
  };
  assert.ok('candidate' in action.inputs, 'action/provision has a candidate input');
  assert.equal(action.runs.steps[0]?.env.LG_CANDIDATE, '${{ inputs.candidate }}');
  const workflow = parse(readFileSync(join(REPO, '.github', 'workflows', 'loadgate.yml'), 'utf8')) as {
    jobs: Record<string, { steps: Array<{ uses?: string; with?: Record<string, unknown> }> }>;
  };
  const step = workflow.jobs['provision-aws']?.steps.find((st) => st.uses === './.loadgate/action/provision');
  assert.equal(step?.with?.candidate, '${{ needs.prepare.outputs.candidate }}');
  assert.equal(step?.with?.version, '${{ needs.prepare.outputs.baseline }}');
});

/**
 * What `terraform destroy` prints when the S3 backend's lock file is held: the diagnostic of
 * internal/command/clistate (Error acquiring the state lock) with the holder's LockInfo
 * (internal/states/statemgr/locker.go), in the box Terraform draws around diagnostics.
 */
function lockError(path: string, created: string): string {
  return [
    '╷',
    '│ Error: Error acquiring the state lock',
    '│ ',
    '│ Error message: operation error S3: PutObject, https response error StatusCode: 412, api error PreconditionFailed: At least one of the pre-conditions you specified did not hold',
    '│ Lock Info:',
    '│   ID:        5c1f0b3e-2a47-4d8e-9b61-0f2d8c7a9e13',
    `│   Path:      ${path}`,
    '│   Operation: OperationTypeApply',
    '│   Who:       runner@fv-az1234-567',
    '│   Version:   1.11.4',
    `│   Created:   ${created}`,
    '│   Info:      ',
    '│ ',
    '│ Terraform acquires a state lock to protect the state from being written',
    '│ by multiple users at the same time. Please resolve the issue above and try',
    '│ again. For most commands, you can disable locking with the "-lock=false"',
    '│ flag, but this is not recommended.',
    '╵',
    '',
  ].join('\n');
}

test(
  "teardown survives the state lock a killed apply left: it unlocks this bench's own state and destroys; anything else it leaves locked",
  { timeout: 120_000 },
  () => {
    const box = sandbox();
    try {
      assert.equal(box.run('provision', provisionEnv).code, 0);
      const lock = join(box.root, 'lock');
      const created = '2026-11-21 10:31:02.123456789 +0000 UTC';
      // The provision job was killed mid-apply: its lock file stays on this bench's state.
      writeFileSync(lock, lockError(`acme-loadgate-state/${KEY}.tflock`, created));
      writeFileSync(box.log, '');
      const unlocked = box.run('teardown', { LG_STATE_KEY: KEY });
      assert.equal(unlocked.code, 0, unlocked.stderr);
      assert.match(
        unlocked.stdout,
        /::warning::the state acme-loadgate-state\/loadgate\/acme\/chat\/42\/2\/terraform\.tfstate\.tflock is locked \(5c1f0b3e-2a47-4d8e-9b61-0f2d8c7a9e13\), left by a job killed during an apply/,
      );
      const calls = box.calls().filter((c) => c.startsWith('terraform'));
      assert.equal(calls.filter((c) => / destroy /.test(c)).length, 2, 'destroyed again after the unlock');
      assert.ok(calls.some((c) => c.endsWith('force-unlock -force 5c1f0b3e-2a47-4d8e-9b61-0f2d8c7a9e13')));
      assert.equal(existsSync(lock), false);

      // A lock on another state (another run's key) is not this teardown's to break.
      writeFileSync(lock, lockError('acme-loadgate-state/loadgate/acme/chat/41/1/terraform.tfstate', created));
      writeFileSync(box.log, '');
      const other = box.run('teardown', { LG_STATE_KEY: KEY });
      assert.equal(other.code, 1);
      assert.match(
        other.stderr,
        /the state is locked by something other than this bench's state \(acme-loadgate-state\/loadgate\/acme\/chat\/41\/1\/terraform\.tfstate\); not unlocking it/,
      );
      assert.ok(!box.calls().some((c) => c.includes('force-unlock')));

      // Past the bench's expiry the janitor may hold the lock: teardown leaves it and says so.
      writeFileSync(lock, lockError(`acme-loadgate-state/${KEY}`, created));
      const tfvars = join(box.s3, TFVARS);
      writeFileSync(tfvars, JSON.stringify({ ...JSON.parse(readFileSync(tfvars, 'utf8')), expires_at: '2020-01-01T00:00:00Z' }));
      writeFileSync(box.log, '');
      const expired = box.run('teardown', { LG_STATE_KEY: KEY });
      assert.equal(expired.code, 1);
      assert.match(expired.stderr, /the bench expired at 2020-01-01T00:00:00Z, so the janitor may be destroying it now; not unlocking/);
      assert.ok(!box.calls().some((c) => c.includes('force-unlock')));
    } finally {
      box.close();
    }
  },
);
