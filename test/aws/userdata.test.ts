import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ROLE_TEMPLATES,
  TEMPLATES_DIR,
  USER_DATA_LIMIT_BYTES,
  compressedSize,
  readTemplate,
  renderTemplate,
  renderUserData,
  templateVariables,
  type NodeRole,
} from '../support/userdata.ts';
import { InputError } from '../../src/util/errors.ts';
import { AWS_TIMING } from '../../src/bench/aws/aws-gate-bench.ts';
import { mattermostServiceName } from '../../src/chat-servers/mattermost/cpu-profile.ts';
import { loadModule, only } from './hcl.ts';
import { readFileSync } from 'node:fs';

const LICENSE_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:loadgate/mattermost-license-AbCdEf';
const common = { bench_name: 'lg-123456-1', region: 'us-east-1', expires_at: '2030-01-31T18:00:00Z' };
const dashboard = readFileSync(new URL('../../infra/aws/modules/bench/files/bench-overview.json', import.meta.url), 'utf8');
const exporter = readFileSync(new URL('../../infra/aws/modules/bench/files/k6-exporter.py', import.meta.url), 'utf8');

const samples = {
  app: {
    ...common,
    node_index: '0',
    node_name: 'app0',
    mattermost_download_url: 'https://releases.mattermost.com/10.12.0/mattermost-10.12.0-linux-amd64.tar.gz',
    license_secret_arn: LICENSE_ARN,
    db_secret_arn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-1234-AbCdEf',
    db_writer_endpoint: 'lg-123456-1.cluster-abc.us-east-1.rds.amazonaws.com',
    db_reader_endpoint: 'lg-123456-1.cluster-ro-abc.us-east-1.rds.amazonaws.com',
    db_name: 'ltdb',
    db_dump_url: 'https://lt-public-data.s3.amazonaws.com/12M_610_fixed_psql.sql.gz',
    opensearch_endpoint: 'vpc-lg-123456-1-abc.us-east-1.es.amazonaws.com',
    site_url: 'http://10.42.100.10',
    config_patch_b64: Buffer.from(JSON.stringify({ ServiceSettings: { SiteURL: 'http://ltserver' } })).toString('base64'),
    duet: 'false',
    site_url_b: 'http://10.42.100.10:8080',
  },
  proxy: { ...common, node_index: '0', node_name: 'proxy0', app_ips: '10.42.100.21,10.42.101.22', duet: 'false' },
  agent: {
    ...common,
    node_index: '3',
    node_name: 'agent3',
    load_engine: 'k6',
    k6_version: 'v1.4.2',
    loadtest_download_url: 'https://github.com/mattermost/mattermost-load-test-ng/releases/download/v1.29.0/mattermost-load-test-ng-v1.29.0-linux-amd64.tar.gz',
    proxy_url: 'http://10.42.100.10',
    metrics_ip: '10.42.0.10',
    agent_api_port: '6565',
    agent_metrics_port: '6566',
    k6_exporter: exporter,
  },
  metrics: {
    ...common,
    node_index: '0',
    node_name: 'metrics0',
    app_ips: '10.42.100.21,10.42.101.22',
    agent_ips: Array.from({ length: 11 }, (_, i) => `10.42.${i % 2}.${30 + i}`).join(','),
    proxy_ip: '10.42.100.10',
    agent_metrics_port: '6566',
    grafana_secret_arn: 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-123456-1/grafana-token-AbCdEf',
    prometheus_image: 'prom/prometheus:v3.5.0',
    grafana_image: 'grafana/grafana:11.6.0',
    pyroscope_image: 'grafana/pyroscope:1.13.0',
    alloy_image: 'grafana/alloy:v1.8.1',
    dashboard_json: dashboard,
    duet: 'false',
  },
} as const;

const roles = Object.keys(ROLE_TEMPLATES) as NodeRole[];

test('the renderer follows templatefile: substitutions, $${ and %%{ escapes, nothing richer', () => {
  assert.equal(renderTemplate('a=${x} b=$${HOME} c=%%{ if } d=$x', { x: '1' }), 'a=1 b=${HOME} c=%{ if } d=$x');
  assert.throws(() => renderTemplate('${missing}', {}), /does not have an attribute named "missing"/);
  assert.throws(() => renderTemplate('${upper(x)}', { x: '1' }), /only \$\{name\} substitutions/);
  assert.throws(() => renderTemplate('%{ if x }y%{ endif }', { x: '1' }), /directives/);
  assert.deepEqual([...templateVariables('${a} $${b} ${c}')].sort(), ['a', 'c']);
});

test('every template variable is supplied by the Terraform call that renders it, and none is unused', async () => {
  const bench = await loadModule('modules/bench');
  const nodes = await loadModule('modules/nodes');
  const perInstance = ['node_index', 'node_name'];
  assert.match(JSON.stringify(nodes.locals), /node_index = tostring\(index\)[\s\S]*node_name +=/);
  const common = Object.keys((only(bench.locals, 'locals') as { common_user_data_vars: Record<string, string> }).common_user_data_vars);
  for (const role of roles) {
    const call = only(bench.module[role], `module ${role}`);
    // The vars map is merge(local.common_user_data_vars, { key = value ... }): read the keys of the literal.
    const keys = [...String(call.user_data_vars).matchAll(/^\s{4}([a-z0-9_]+)\s+=/gm)].map((m) => m[1] as string);
    const supplied = new Set([...common, ...keys, ...perInstance]);
    const templates = String(call.user_data_templates);
    for (const file of ROLE_TEMPLATES[role]) assert.ok(templates.includes(`templates}/${file}`), `${role} renders ${file}`);
    const used = new Set(ROLE_TEMPLATES[role].flatMap((file) => [...templateVariables(readTemplate(file), file)]));
    assert.deepEqual([...used].sort(), [...supplied].sort(), `${role}: template variables match the vars map`);
    // The TypeScript schema validates exactly the same names.
    assert.deepEqual(Object.keys(samples[role]).sort(), [...used].sort(), `${role}: the sample covers every variable`);
  }
  const onDisk = readdirSync(TEMPLATES_DIR).sort();
  assert.deepEqual(onDisk, [...new Set(Object.values(ROLE_TEMPLATES).flat())].sort());
});

test('each role renders to a valid bash script under the EC2 user-data limit', () => {
  const work = mkdtempSync(join(tmpdir(), 'loadgate-userdata-'));
  try {
    for (const role of roles) {
      const script = renderUserData(role, samples[role] as never);
      assert.ok(script.startsWith('#!/bin/bash\n'), `${role} starts with a shebang`);
      assert.doesNotMatch(script, /\$\{[a-z_]+\}/, `${role}: no unrendered substitution is left`);
      const file = join(work, `${role}.sh`);
      writeFileSync(file, script);
      execFileSync('bash', ['-n', file]); // throws with bash's message on a syntax error
      const size = compressedSize(script);
      assert.ok(size < USER_DATA_LIMIT_BYTES, `${role}: ${size} compressed bytes < ${USER_DATA_LIMIT_BYTES}`);
      assert.match(script, /set -euo pipefail/);
      assert.match(script, /hostnamectl set-hostname "\$NODE_NAME"/);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('the app node installs the version under test and reads the licence and database password from Secrets Manager', () => {
  const script = renderUserData('app', samples.app);
  assert.match(script, /MATTERMOST_DOWNLOAD_URL='https:\/\/releases\.mattermost\.com\/10\.12\.0\/mattermost-10\.12\.0-linux-amd64\.tar\.gz'/);
  assert.match(script, /\/usr\/local\/bin\/loadgate-mattermost install "\$MATTERMOST_DOWNLOAD_URL"/);
  // Only the secret's ARN is in the user data; the licence is fetched at boot.
  assert.match(script, new RegExp(`LICENSE_SECRET_ARN='${LICENSE_ARN}'`));
  assert.match(script, /secretsmanager get-secret-value .*--secret-id "\$LICENSE_SECRET_ARN"/);
  assert.match(script, /secretsmanager get-secret-value .*--secret-id "\$DB_SECRET_ARN"/);
  assert.doesNotMatch(script, /PASSWORD='/, 'no password literal in user data');
  assert.match(script, /DB_PASSWORD=\$\(jq -r \.password <<< "\$DB_SECRET"\)/);
  // The gate's patch is merged first and the bench settings re-applied on top of it.
  assert.match(script, /program=\$\(cat \/etc\/loadgate\/bench-settings\.jq\)/);
  assert.match(script, /"\(\. \* \\\$patch\[0\]\) \| \$program"/);
  assert.match(script, /\.ClusterSettings\.Enable = true/);
  assert.match(script, /\.MetricsSettings\.ListenAddress = ":8067"/);
  // Dump loading happens once, on the first node, and the others wait for it.
  assert.match(
    script,
    /if \[ "\$NODE_INDEX" = "0" \] && ! marker_set loadgate_dataset_ready; then\n {2}\/usr\/local\/bin\/loadgate-dataset prepare "\$DB_DUMP_URL"\n/,
  );
  // As load-test-ng loads the seed dumps: plain psql, errors counted (aws-dataset.test.ts runs it).
  for (const load of script.match(/\| psql "\$PSQL_URL"[^>]*>/g) ?? []) assert.doesNotMatch(load, /ON_ERROR_STOP|--single-transaction/);
  assert.equal((script.match(/\| psql "\$PSQL_URL"/g) ?? []).length, 2, 'plain and gzipped dumps');
  assert.match(
    script,
    /marker_set loadgate_dataset_ready \|\| \{ echo "loadgate: the dataset was not ready within 4 hours/,
    'a node never starts on a missing dataset',
  );
  assert.match(script, /marker_set loadgate_dataset_failed && \{ echo "loadgate: app0 could not prepare the dataset/, 'nor waits 4 hours for one that failed');
  // The loaded data becomes the pristine copy every run is restored from by a rename, not a
  // copy; and the helper that restores it.
  assert.match(script, /alter database \\"\$DB_NAME\\" rename to \\"\$\{DB_NAME\}_pristine\\"/);
  assert.doesNotMatch(script, /create database \\"\$\{DB_NAME\}_(pristine|b)\\"/, 'no copy of the dump at boot');
  assert.match(script, /drop database if exists \\"\$db\\" with \(force\)/);
});

test('boot starts no Mattermost: no migration of a copy the first run restores over, and the install overlaps the dump load', () => {
  for (const duet of ['false', 'true'] as const) {
    const script = renderUserData('app', { ...samples.app, duet });
    const boot = script.slice(script.lastIndexOf('\nMATTERMOST\n'));
    assert.doesNotMatch(boot, /loadgate-mattermost( --slot b)? start/, `duet=${duet}: no start at boot`);
    assert.ok(boot.indexOf('loadgate-mattermost install') < boot.indexOf('loadgate-dataset prepare'), 'installed before the dump load, not after it');
    assert.ok(boot.indexOf("echo '{}' | /usr/local/bin/loadgate-mattermost configure") < boot.indexOf('waiting for the dataset'), 'configured before the wait');
  }
});

test('the proxy gets the seed report nginx configuration with every app node upstream', () => {
  const script = renderUserData('proxy', samples.proxy);
  assert.match(script, /keepalive 256;/);
  assert.match(
    script,
    /location ~ \/api\/v\[0-9\]\+\/\(users\/\)\?websocket\$ \{\n {4}proxy_set_header Upgrade \$http_upgrade;\n {4}proxy_set_header Connection "upgrade";/,
  );
  assert.match(script, /proxy_cache_path \/var\/cache\/nginx levels=1:2 keys_zone=mattermost_cache:10m max_size=3g/);
  assert.match(script, /location ~ \/api\/v\[0-9\]\+\/users\/\[a-z0-9\]\+\/image\$[\s\S]*proxy_cache_valid 200 24h;/);
  assert.match(script, /worker_connections 20000;/);
  // The upstream loop really produces one server per app node.
  const loop = script.slice(script.indexOf('{\n  echo "upstream backend {"'), script.indexOf('} > /etc/nginx/sites-available/mattermost'));
  assert.ok(loop.length > 0, 'the upstream loop');
  const output = execFileSync('bash', ['-c', `APP_IPS='${samples.proxy.app_ips}'\n${loop}}`], { encoding: 'utf8' });
  assert.match(
    output,
    /^upstream backend \{\n {2}server 10\.42\.100\.21:8065 max_fails=0;\n {2}server 10\.42\.101\.22:8065 max_fails=0;\n {2}keepalive 256;\n\}/,
  );
});

test('the metrics node scrapes targets named as the health queries expect', () => {
  const script = renderUserData('metrics', samples.metrics);
  assert.ok(script.includes(dashboard.trim()), 'the dashboard is embedded');
  // Run the target-list helper the Prometheus config is built with.
  const helper = script.slice(script.indexOf('targets() {'), script.indexOf('APP_COUNT='));
  const output = execFileSync('bash', ['-c', `${helper}\ntargets app 2 8067; targets agent 3 4000; targets agent 4 6566 2`], { encoding: 'utf8' });
  assert.equal(output, '["app0:8067", "app1:8067"]\n["agent0:4000", "agent1:4000", "agent2:4000"]\n["agent2:6566", "agent3:6566"]\n');
  assert.match(script, /NODE_TARGETS='\["proxy:9100", "localhost:9100"\]'/);
  assert.match(script, /- targets: \$\(targets agent "\$3" "\$AGENT_METRICS_PORT" "\$2"\)/, "the agents' exporters, not their control API");
  assert.match(script, /--web\.enable-remote-write-receiver/);
  // A service account's token goes to the bench secret (through a file, never argv or the log).
  assert.match(script, /grafana_api \/api\/serviceaccounts '\{"name":"loadgate","role":"Editor"/);
  assert.match(script, /put-secret-value .*--secret-id "\$GRAFANA_TOKEN_SECRET_ARN" --secret-string file:\/\/\/etc\/loadgate\/grafana-token/);
  assert.doesNotMatch(script, /--secret-string "\$/);
  // Without a proxy, only the metrics node's own node_exporter is listed.
  const noProxy = renderUserData('metrics', { ...samples.metrics, proxy_ip: '' });
  assert.match(noProxy, /PROXY_IP=''/);
  const hosts = noProxy.slice(noProxy.indexOf('{\n  if [ -n "$PROXY_IP" ]'), noProxy.indexOf('} >> /etc/hosts') + 1);
  assert.equal(
    execFileSync('bash', ['-c', `PROXY_IP='' APP_IPS='10.0.0.1' AGENT_IPS='10.0.0.2'\n${hosts}`], { encoding: 'utf8' }),
    '10.0.0.1 app0\n10.0.0.2 agent0\n',
  );
});

test('unsafe values are refused before they reach a script', () => {
  assert.throws(
    () => renderUserData('app', { ...samples.app, mattermost_download_url: "https://example.com/x.tar.gz'; rm -rf /" }),
    (error: unknown) => error instanceof InputError && /app user data mattermost_download_url/.test(error.message),
  );
  assert.throws(() => renderUserData('proxy', { ...samples.proxy, app_ips: '10.0.0.1;reboot' }), InputError);
  assert.throws(() => renderUserData('agent', { ...samples.agent, load_engine: 'jmeter' as 'k6' }), InputError);
  assert.throws(() => renderUserData('metrics', { ...samples.metrics, dashboard_json: '{}\nDASHBOARD\nreboot' }), InputError);
  assert.throws(() => renderUserData('agent', { ...samples.agent, k6_exporter: 'x\nEXPORTER\nreboot' }), InputError);
});

/** A here-document's body from a rendered script: the on-instance helpers are data to bash -n. */
function heredoc(script: string, marker: string): string {
  const start = script.indexOf(`<<'${marker}'\n`);
  assert.ok(start >= 0, `heredoc ${marker}`);
  const body = script.slice(start + marker.length + 5);
  return body.slice(0, body.indexOf(`\n${marker}\n`));
}

test('the helpers the gate runs through SSM are valid scripts with the documented commands', () => {
  const work = mkdtempSync(join(tmpdir(), 'loadgate-helpers-'));
  try {
    const app = renderUserData('app', samples.app);
    const agent = renderUserData('agent', samples.agent);
    const helpers: Record<string, string> = {
      'loadgate-mattermost': heredoc(app, 'MATTERMOST'),
      'loadgate-dataset': heredoc(app, 'DATASET'),
      'loadgate-agent': heredoc(agent, 'AGENT'),
    };
    for (const [name, body] of Object.entries(helpers)) {
      writeFileSync(join(work, name), body);
      execFileSync('bash', ['-n', join(work, name)]);
      assert.match(body, /^#!\/bin\/bash\nset -euo pipefail\n/, `${name} stops at the first error`);
    }
    for (const sub of ['install)', 'configure)', 'start)', 'stop)', 'version)']) assert.ok(helpers['loadgate-mattermost']!.includes(`  ${sub}`), sub);
    for (const sub of ['start-k6)', 'stop-k6)']) assert.ok(helpers['loadgate-agent']!.includes(`  ${sub}`), sub);
    assert.match(helpers['loadgate-agent']!, /--address "0\.0\.0\.0:\$port"/, "k6's REST API reaches the controller (the security group admits only it)");
    assert.match(helpers['loadgate-agent']!, /grep -E '\^\(LOADGATE\|K6\)_\[A-Z0-9_\]\+=' > "\$home\/k6\.env"/, 'only LOADGATE_ and K6_ variables reach k6');
    // The exporter is the repository's file, byte for byte, and valid Python.
    assert.equal(heredoc(agent, 'EXPORTER'), exporter);
    writeFileSync(join(work, 'exporter.py'), exporter);
    execFileSync('python3', ['-m', 'py_compile', join(work, 'exporter.py')]);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('the bench settings win over any patch on the node: DataSource and metrics cannot be overridden', () => {
  const app = renderUserData('app', samples.app);
  const program = heredoc(app, 'JQ');
  const base = { SqlSettings: { DataSource: 'from-base' }, ServiceSettings: { EnableLinkPreviews: true } };
  const patch = {
    SqlSettings: { DataSource: 'postgres://attacker@elsewhere/db' },
    MetricsSettings: { ListenAddress: ':9999' },
    ServiceSettings: { EnableLinkPreviews: false },
  };
  const out = execFileSync(
    'jq',
    [
      '-n',
      '--argjson',
      'base',
      JSON.stringify(base),
      '--argjson',
      'patch',
      JSON.stringify(patch),
      '--arg',
      'site',
      'http://10.42.100.10',
      '--arg',
      'data_source',
      'postgres://bench',
      '--arg',
      'replica',
      '',
      '--arg',
      'cluster',
      'lg-1',
      '--arg',
      'opensearch',
      '',
      '--arg',
      'license',
      '',
      `($base * $patch) | ${program}`,
    ],
    { encoding: 'utf8' },
  );
  const config = JSON.parse(out) as {
    SqlSettings: { DataSource: string; DataSourceReplicas: unknown[] };
    MetricsSettings: { ListenAddress: string };
    ServiceSettings: { EnableLinkPreviews: boolean; SiteURL: string };
  };
  assert.equal(config.SqlSettings.DataSource, 'postgres://bench');
  assert.deepEqual(config.SqlSettings.DataSourceReplicas, []);
  assert.equal(config.MetricsSettings.ListenAddress, ':8067');
  assert.equal(config.ServiceSettings.EnableLinkPreviews, false, 'ordinary settings do come from the patch');
  assert.equal(config.ServiceSettings.SiteURL, 'http://10.42.100.10');
});

/** Every here-document body of `marker` in a rendered script, in order. */
function heredocs(script: string, marker: string): string[] {
  const bodies: string[] = [];
  let from = 0;
  for (;;) {
    const start = script.indexOf(`<<'${marker}'\n`, from);
    if (start < 0) return bodies;
    const body = script.slice(start + marker.length + 5);
    bodies.push(body.slice(0, body.indexOf(`\n${marker}\n`)));
    from = start + 1;
  }
}

const duetSamples = {
  app: { ...samples.app, duet: 'true' },
  proxy: { ...samples.proxy, duet: 'true' },
  agent: samples.agent,
  metrics: { ...samples.metrics, agent_ips: '10.42.0.30,10.42.1.31,10.42.0.32,10.42.1.33', duet: 'true' },
} as const;

test('a duet bench renders every role to a valid bash script under the user-data limit', () => {
  const work = mkdtempSync(join(tmpdir(), 'loadgate-userdata-duet-'));
  try {
    for (const role of roles) {
      const script = renderUserData(role, duetSamples[role] as never);
      writeFileSync(join(work, `${role}.sh`), script);
      execFileSync('bash', ['-n', join(work, `${role}.sh`)]);
      assert.ok(compressedSize(script) < USER_DATA_LIMIT_BYTES, `${role}: ${compressedSize(script)} compressed bytes`);
      if (role !== 'agent') assert.match(script, /^DUET='true'$/m, `${role} knows it is a duet`);
    }
    const app = renderUserData('app', duetSamples.app);
    assert.match(app, /^SITE_URL_B='http:\/\/10\.42\.100\.10:8080'$/m);
    // Slot b's unit: its own directories and slice; slot a joins its own slice by a drop-in, in a duet only.
    const units = heredocs(app, 'UNIT');
    assert.equal(units.length, 2);
    assert.match(units[1]!, /^Slice=loadgate-slot-b\.slice$/m);
    assert.match(units[1]!, /^ExecStart=\/opt\/mattermost-b\/bin\/mattermost --config \/etc\/mattermost-b\/config\.json$/m);
    assert.doesNotMatch(units[0]!, /Slice=|mattermost-b/, "slot a's unit is the sequential bench's");
    assert.match(
      app,
      /if \[ "\$DUET" = true \]; then\n {2}for slot in a b; do\n {4}printf '\[Unit\]\\nDescription=loadgate duet slot %s\\n\\n\[Slice\]\\nCPUWeight=100\\n'/,
    );
    assert.doesNotMatch(app, /AllowedCPUs|CPUAffinity|taskset/, 'no slot is pinned to cores');
    // Slot b is installed and configured beside slot a; its database comes from its first restore.
    assert.ok(app.indexOf('loadgate-mattermost --slot b install') > app.indexOf('/usr/local/bin/loadgate-mattermost install'), 'slot b after slot a');
    assert.doesNotMatch(app, /_b\\" template/, 'no copy for slot b at boot');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

/**
 * The app node's helpers run with bash in a scratch directory: their absolute paths
 * moved under it, chown and psql stood in for.
 */
function helperSandbox(duet: boolean): {
  root: string;
  run: (helper: 'MATTERMOST' | 'DATASET', args: string[], input?: string) => { status: number; stdout: string; stderr: string };
  cleanup: () => void;
} {
  const root = mkdtempSync(join(tmpdir(), 'loadgate-helpers-run-'));
  const app = renderUserData('app', { ...samples.app, duet: duet ? 'true' : 'false' });
  const relocate = (text: string): string =>
    text
      .replaceAll('/etc/loadgate/', `${root}/etc/loadgate/`)
      .replaceAll('/etc/mattermost', `${root}/etc/mattermost`)
      .replaceAll('/var/lib/loadgate/', `${root}/var/lib/loadgate/`);
  for (const dir of ['bin', 'etc/loadgate', 'etc/mattermost', 'etc/mattermost-b', 'var/lib/loadgate/releases']) mkdirSync(join(root, dir), { recursive: true });
  writeFileSync(join(root, 'bin/chown'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  writeFileSync(join(root, 'bin/psql'), `#!/bin/sh\nfor a in "$@"; do echo "$a"; done >> ${JSON.stringify(join(root, 'psql.log'))}\n`, { mode: 0o755 });
  writeFileSync(join(root, 'etc/loadgate/duet'), `${duet}\n`);
  const [settings, settingsB] = heredocs(app, 'JQ');
  writeFileSync(join(root, 'etc/loadgate/bench-settings.jq'), `${settings}\n`);
  if (duet) writeFileSync(join(root, 'etc/loadgate/bench-settings-b.jq'), `${settingsB}\n`);
  const env = (db: string, cluster: string, site: string): string =>
    `SITE_URL='${site}'\nDATA_SOURCE='postgres://u:p@writer:5432/${db}?sslmode=require'\nREPLICA_SOURCE='postgres://u:p@reader:5432/${db}?sslmode=require'\nCLUSTER_NAME='${cluster}'\nOPENSEARCH_ENDPOINT='vpc-os.example'\nLICENSE_SECRET_ARN=''\n`;
  writeFileSync(join(root, 'etc/loadgate/bench-settings.env'), env('ltdb', 'lg-123456-1', 'http://10.42.100.10'));
  writeFileSync(join(root, 'etc/loadgate/bench-settings-b.env'), env('ltdb_b', 'lg-123456-1-b', 'http://10.42.100.10:8080'));
  writeFileSync(join(root, 'etc/loadgate/db.env'), "PSQL_ADMIN_URL='postgres://u:p@writer:5432/postgres'\nDB_NAME='ltdb'\n");
  writeFileSync(
    join(root, 'etc/mattermost/config.base.json'),
    JSON.stringify({ ServiceSettings: { EnableLinkPreviews: true }, ElasticsearchSettings: { IndexPrefix: '' } }),
  );
  const files = { MATTERMOST: join(root, 'loadgate-mattermost'), DATASET: join(root, 'loadgate-dataset') };
  writeFileSync(files.MATTERMOST, relocate(heredoc(app, 'MATTERMOST')), { mode: 0o755 });
  writeFileSync(files.DATASET, relocate(heredoc(app, 'DATASET')), { mode: 0o755 });
  const run = (helper: 'MATTERMOST' | 'DATASET', args: string[], input = '') => {
    const result = spawnSync('bash', [files[helper], ...args], {
      input,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(root, 'bin')}:${process.env.PATH ?? ''}` },
    });
    return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
  };
  return { root, run, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

test('on a sequential bench, --slot b fails clearly and slot a is the default', () => {
  const box = helperSandbox(false);
  try {
    for (const [helper, args] of [
      ['MATTERMOST', ['--slot', 'b', 'version']],
      ['MATTERMOST', ['--slot', 'b', 'configure']],
      ['DATASET', ['--slot', 'b', 'restore']],
    ] as const) {
      const result = box.run(helper, [...args], '{}');
      assert.equal(result.status, 2, `${helper} ${args.join(' ')}`);
      assert.match(result.stderr, /this bench was built without duet \(bench variable duet = false\)/);
    }
    assert.equal(box.run('MATTERMOST', ['--slot', 'c', 'stop']).status, 2);
    assert.match(box.run('MATTERMOST', ['frobnicate']).stderr, /usage: loadgate-mattermost \[--slot a\|b\] install URL/);
    assert.equal(existsSync(join(box.root, 'psql.log')), false, 'nothing was restored');
    // Without --slot: slot a, as before duets existed.
    assert.equal(box.run('MATTERMOST', ['configure'], '{"ServiceSettings":{"EnableLinkPreviews":false}}').status, 0);
    const config = JSON.parse(readFileSync(join(box.root, 'etc/mattermost/config.json'), 'utf8'));
    assert.equal(config.ServiceSettings.ListenAddress, ':8065');
    assert.equal(config.ServiceSettings.EnableLinkPreviews, false);
    assert.equal(config.ClusterSettings.GossipPort, 8074);
    assert.equal(config.ElasticsearchSettings.IndexPrefix, '', "slot a keeps the base config's index prefix");
    assert.equal(box.run('DATASET', ['restore']).status, 0);
    assert.deepEqual(
      readFileSync(join(box.root, 'psql.log'), 'utf8')
        .split('\n')
        .filter((l) => /database/.test(l)),
      ['drop database if exists "ltdb" with (force)', 'create database "ltdb" template "ltdb_pristine"'],
    );
  } finally {
    box.cleanup();
  }
});

test('on a duet bench, slot b gets its own database, ports, cluster, files and index prefix', () => {
  const box = helperSandbox(true);
  try {
    const patch = '{"ServiceSettings":{"EnableLinkPreviews":false},"ClusterSettings":{"GossipPort":9999}}';
    for (const args of [
      ['--slot', 'a', 'configure'],
      ['--slot', 'b', 'configure'],
    ])
      assert.equal(box.run('MATTERMOST', args, patch).status, 0, args.join(' '));
    const read = (dir: string) => JSON.parse(readFileSync(join(box.root, dir, 'config.json'), 'utf8'));
    const a = read('etc/mattermost');
    const b = read('etc/mattermost-b');
    assert.deepEqual(
      [
        a.ServiceSettings.ListenAddress,
        a.MetricsSettings.ListenAddress,
        a.ClusterSettings.GossipPort,
        a.ClusterSettings.ClusterName,
        a.FileSettings.Directory,
        a.SqlSettings.DataSource,
      ],
      [':8065', ':8067', 8074, 'lg-123456-1', '/var/lib/mattermost/', 'postgres://u:p@writer:5432/ltdb?sslmode=require'],
    );
    assert.deepEqual(
      [
        b.ServiceSettings.ListenAddress,
        b.MetricsSettings.ListenAddress,
        b.ClusterSettings.GossipPort,
        b.ClusterSettings.ClusterName,
        b.FileSettings.Directory,
        b.SqlSettings.DataSource,
        b.SqlSettings.DataSourceReplicas,
      ],
      [
        ':8165',
        ':8167',
        8174,
        'lg-123456-1-b',
        '/var/lib/mattermost-b/',
        'postgres://u:p@writer:5432/ltdb_b?sslmode=require',
        ['postgres://u:p@reader:5432/ltdb_b?sslmode=require'],
      ],
    );
    assert.equal(b.ServiceSettings.SiteURL, 'http://10.42.100.10:8080');
    assert.equal(b.ServiceSettings.EnableLinkPreviews, false, 'the same patch as slot a');
    assert.equal(b.ElasticsearchSettings.IndexPrefix, 'slot_b_');
    assert.notEqual(a.ServiceSettings.LocalModeSocketLocation, b.ServiceSettings.LocalModeSocketLocation);
    // Restores of both slots copy the one pristine database, under one lock.
    assert.equal(box.run('DATASET', ['--slot', 'b', 'restore']).status, 0);
    assert.equal(box.run('DATASET', ['--slot', 'a', 'restore']).status, 0);
    assert.deepEqual(
      readFileSync(join(box.root, 'psql.log'), 'utf8')
        .split('\n')
        .filter((l) => /database/.test(l)),
      [
        'drop database if exists "ltdb_b" with (force)',
        'create database "ltdb_b" template "ltdb_pristine"',
        'drop database if exists "ltdb" with (force)',
        'create database "ltdb" template "ltdb_pristine"',
      ],
    );
    const dataset = heredoc(renderUserData('app', duetSamples.app), 'DATASET');
    assert.match(dataset, /exec 9> \/var\/lib\/loadgate\/dataset\.lock\nflock 9\nadmin -c "drop database if exists/);
    // Two slots installing one release: one download, under a lock per cached file.
    assert.match(
      heredoc(renderUserData('app', duetSamples.app), 'MATTERMOST'),
      /\(\n {6}flock 9\n {6}if \[ ! -f "\$cached" \]; then\n {8}curl [^\n]+\n {8}mv "\$cached\.part" "\$cached"\n {6}fi\n {4}\) 9> "\$cached\.lock"/,
    );
  } finally {
    box.cleanup();
  }
});

test('a duet proxy adds slot b on :8080 with the same server settings, and nginx accepts it', () => {
  const root = mkdtempSync(join(tmpdir(), 'loadgate-proxy-'));
  try {
    const site = (duet: boolean): string => {
      const script = renderUserData('proxy', { ...samples.proxy, duet: duet ? 'true' : 'false' });
      const part = script.slice(script.indexOf('mkdir -p /etc/nginx/snippets'), script.indexOf('rm -f /etc/nginx/sites-enabled/default'));
      const dir = join(root, duet ? 'duet' : 'sequential');
      mkdirSync(join(dir, 'sites-available'), { recursive: true });
      execFileSync('bash', [
        '-euo',
        'pipefail',
        '-c',
        `APP_IPS='${samples.proxy.app_ips}' DUET=${duet}\n${part.replaceAll('/etc/nginx', dir).replaceAll('/var/cache/nginx', `${dir}/cache`)}`,
      ]);
      writeFileSync(
        join(dir, 'nginx.conf'),
        `pid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\n  include ${dir}/sites-available/mattermost;\n}\n`,
      );
      execFileSync('nginx', ['-t', '-q', '-p', dir, '-c', join(dir, 'nginx.conf')], { stdio: 'pipe' });
      return readFileSync(join(dir, 'sites-available/mattermost'), 'utf8');
    };
    const sequential = site(false);
    const duet = site(true);
    assert.equal((sequential.match(/^server \{$/gm) ?? []).length, 1);
    assert.doesNotMatch(sequential, /backend_b|8080|8165/);
    assert.ok(duet.startsWith(sequential.replaceAll(join(root, 'sequential'), join(root, 'duet'))), 'slot b is appended; slot a is the sequential site');
    const [serverA, serverB] = duet.match(/^server \{$[\s\S]*?^\}$/gm) ?? [];
    assert.equal(serverB, serverA!.replace('listen 80 reuseport;', 'listen 8080 reuseport;').replaceAll('snippets/proxy.conf;', 'snippets/proxy-b.conf;'));
    assert.match(
      duet,
      /upstream backend_b \{\n {2}server 10\.42\.100\.21:8165 max_fails=0;\n {2}server 10\.42\.101\.22:8165 max_fails=0;\n {2}keepalive 256;\n\}/,
    );
    const snippetB = readFileSync(join(root, 'duet/snippets/proxy-b.conf'), 'utf8');
    assert.equal(snippetB, readFileSync(join(root, 'duet/snippets/proxy.conf'), 'utf8').replace('proxy_pass http://backend;', 'proxy_pass http://backend_b;'));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a duet metrics node runs a second Prometheus for slot b with the same jobs, each over its own agents', () => {
  const script = renderUserData('metrics', duetSamples.metrics);
  const config = script.slice(script.indexOf('targets() {'), script.indexOf('mkdir -p /etc/loadgate/prometheus /var/lib'));
  const render = (duet: boolean, args: string): string =>
    execFileSync(
      'bash',
      [
        '-euo',
        'pipefail',
        '-c',
        `DUET=${duet} APP_IPS='10.0.0.1,10.0.0.2' AGENT_IPS='${duetSamples.metrics.agent_ips}' AGENT_METRICS_PORT=6566 PROXY_IP=10.0.0.9\n${config}\nprometheus_config ${args}`,
      ],
      { encoding: 'utf8' },
    );
  const jobs = (yaml: string): Record<string, string> =>
    Object.fromEntries(
      [...yaml.matchAll(/- job_name: (\w+)\n {4}static_configs:\n((?: {6}- targets: .*\n)+)/g)].map((m) => [
        m[1],
        m[2]!.replace(/ {6}- targets: /g, '').trim(),
      ]),
    );
  // Sequential: every agent on slot a's Prometheus, as before.
  assert.deepEqual(jobs(render(false, '8067 0 4 9090')).loadtest, '["agent0:6566", "agent1:6566", "agent2:6566", "agent3:6566"]');
  assert.match(script, /prometheus_config 8067 0 "\$SLOT_A_AGENTS" 9090 > \/etc\/loadgate\/prometheus\/prometheus\.yml/);
  assert.match(script, /SLOT_A_AGENTS=\$AGENT_COUNT\nif \[ "\$DUET" = true \]; then SLOT_A_AGENTS=\$\(\(AGENT_COUNT \/ 2\)\); fi/);
  assert.match(script, /prometheus_config 8167 "\$SLOT_A_AGENTS" "\$AGENT_COUNT" 9091 > \/etc\/loadgate\/prometheus-b\/prometheus\.yml/);
  const a = jobs(render(true, '8067 0 2 9090'));
  const b = jobs(render(true, '8167 2 4 9091'));
  assert.deepEqual(Object.keys(a), ['mattermost', 'node', 'loadtest', 'prometheus']);
  assert.deepEqual(Object.keys(b), Object.keys(a), 'the same job names');
  assert.equal(a.mattermost, '["app0:8067", "app1:8067"]');
  assert.equal(b.mattermost, '["app0:8167", "app1:8167"]');
  assert.equal(a.loadtest, '["agent0:6566", "agent1:6566"]');
  assert.equal(b.loadtest, '["agent2:6566", "agent3:6566"]');
  assert.equal(b.node, a.node, 'every node on both');
  assert.equal(b.prometheus, '["localhost:9091"]');
  // Its own container, config and TSDB, run as the first; Grafana gets it as a second data source.
  assert.match(
    script,
    /run prometheus-b "\$PROMETHEUS_IMAGE" \\\n {4}-v \/etc\/loadgate\/prometheus-b:\/etc\/prometheus:ro -v \/var\/lib\/loadgate\/prometheus-b:\/prometheus \\\n[\s\S]*?--web\.listen-address=0\.0\.0\.0:9091/,
  );
  const sources = heredocs(script, 'GRAFANA');
  assert.match(
    sources[1]!,
    /^ {2}- name: Prometheus slot b\n {4}uid: prometheus-b\n {4}type: prometheus\n {4}access: proxy\n {4}url: http:\/\/127\.0\.0\.1:9091$/,
  );
});

test("the metrics node's Alloy profiles each slot's Mattermost under labels that tell the slots apart, at the interval the gate reads them with", () => {
  const script = renderUserData('metrics', duetSamples.metrics);
  const fn = script.slice(script.indexOf('alloy_config() {'), script.indexOf('mkdir -p /etc/loadgate/alloy'));
  const render = (duet: boolean): string =>
    execFileSync('bash', ['-euo', 'pipefail', '-c', `DUET=${duet} APP_COUNT=2\n${fn}\nalloy_config`], { encoding: 'utf8' });
  const targets = (config: string): string[] => [...config.matchAll(/^ {4}(\{.*\}),$/gm)].map((m) => m[1] as string);
  assert.deepEqual(targets(render(false)), [
    '{"__address__" = "app0:8067", "service_name" = "mattermost", "slot" = "a", "instance" = "app0:8067"}',
    '{"__address__" = "app1:8067", "service_name" = "mattermost", "slot" = "a", "instance" = "app1:8067"}',
  ]);
  assert.deepEqual(targets(render(true)), [
    '{"__address__" = "app0:8067", "service_name" = "mattermost", "slot" = "a", "instance" = "app0:8067"}',
    '{"__address__" = "app0:8167", "service_name" = "mattermost-b", "slot" = "b", "instance" = "app0:8167"}',
    '{"__address__" = "app1:8067", "service_name" = "mattermost", "slot" = "a", "instance" = "app1:8067"}',
    '{"__address__" = "app1:8167", "service_name" = "mattermost-b", "slot" = "b", "instance" = "app1:8167"}',
  ]);
  // The selectors the gate reads each slot with match these service names.
  assert.ok(
    render(true).includes(`service_name" = "${mattermostServiceName('b')}"`) && render(true).includes(`service_name" = "${mattermostServiceName('a')}"`),
  );
  assert.match(render(true), new RegExp(`^ {2}scrape_interval = "${AWS_TIMING.profileScrapeIntervalSec}s"$`, 'm'));
  assert.match(render(true), /pyroscope\.write "local" \{\n {2}endpoint \{\n {4}url = "http:\/\/127\.0\.0\.1:4040"/);
  assert.match(script, /alloy_config > \/etc\/loadgate\/alloy\/config\.alloy\n/);
});

/**
 * Runs the node's expiry check (common.sh.tftpl's loadgate-expiry) with `curl` and
 * `systemctl` stand-ins on PATH: curl answers the IMDSv2 token and the ExpiresAt tag
 * as the instance metadata service does (or fails, as when it is unreachable), and
 * systemctl records what it was asked to do.
 */
function runExpiryCheck(work: string, last: string, tag: string | null): { poweredOff: boolean; last: string; stdout: string } {
  const bin = join(work, 'bin');
  mkdirSync(bin, { recursive: true });
  const script = join(work, 'loadgate-expiry');
  writeFileSync(script, heredoc(renderUserData('agent', samples.agent), 'EXPIRY'), { mode: 0o755 });
  // IMDSv2: PUT /latest/api/token, then GET /latest/meta-data/tags/instance/<key> with the token.
  writeFileSync(
    join(bin, 'curl'),
    tag === null
      ? '#!/bin/sh\nexit 7\n'
      : `#!/bin/sh\ncase "$*" in\n  *"-X PUT"*/latest/api/token*) echo token-1 ;;\n  *"X-aws-ec2-metadata-token: token-1"*/latest/meta-data/tags/instance/ExpiresAt*) printf %s '${tag}' ;;\n  *) exit 22 ;;\nesac\n`,
    { mode: 0o755 },
  );
  const calls = join(work, 'systemctl.calls');
  writeFileSync(join(bin, 'systemctl'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(calls)}\n`, { mode: 0o755 });
  const file = join(work, 'expires-at');
  writeFileSync(file, `${last}\n`);
  rmSync(calls, { force: true });
  const result = spawnSync('bash', [script, file], { env: { PATH: `${bin}:/usr/bin:/bin` }, encoding: 'utf8' });
  assert.equal(result.status, 0, result.stderr);
  const poweredOff = existsSync(calls) && readFileSync(calls, 'utf8').trim() === 'poweroff';
  return { poweredOff, last: readFileSync(file, 'utf8').trim(), stdout: result.stdout };
}

test("every node powers itself off at the bench's expiry, honouring a later ExpiresAt tag a run job set and no earlier one", () => {
  const past = '2020-01-01T00:00:00Z';
  const future = '2999-01-01T00:00:00Z';
  for (const role of roles) {
    const script = renderUserData(role, samples[role] as never);
    // Armed before the first command that can fail under set -e (apt-get, downloads).
    assert.ok(script.indexOf('systemctl enable --now loadgate-expiry.timer') < script.indexOf('retry apt-get'), `${role}: the timer is armed first`);
    assert.match(script, /^EXPIRES_AT='2030-01-31T18:00:00Z'$/m, `${role}: the plan's expiry is the starting point`);
  }
  const work = mkdtempSync(join(tmpdir(), 'loadgate-expiry-'));
  try {
    // The plan's expiry passed, but a run job moved the tag later: the node stays up and remembers the new time.
    assert.deepEqual(runExpiryCheck(work, past, future), { poweredOff: false, last: future, stdout: '' });
    // Both have passed: the node powers off (EC2 terminates it).
    const expired = runExpiryCheck(work, past, '2021-01-01T00:00:00Z');
    assert.equal(expired.poweredOff, true);
    assert.match(expired.stdout, /expired at 2021-01-01T00:00:00Z/, 'the later of the two');
    // An earlier tag never brings the expiry forward (the janitor reads the latest over the bench).
    assert.deepEqual(runExpiryCheck(work, future, past), { poweredOff: false, last: future, stdout: '' });
    // The metadata service does not answer, or answers no time: the latest time seen stands.
    assert.deepEqual(runExpiryCheck(work, future, null), { poweredOff: false, last: future, stdout: '' });
    assert.equal(runExpiryCheck(work, past, null).poweredOff, true);
    assert.deepEqual(runExpiryCheck(work, future, 'soon'), { poweredOff: false, last: future, stdout: '' });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('the expiry timer runs the check every minute from boot', () => {
  const script = renderUserData('app', samples.app);
  const timer = heredoc(script, 'EXPIRY_TIMER');
  assert.match(timer, /^OnUnitActiveSec=1min$/m);
  assert.match(timer, /^WantedBy=timers\.target$/m);
  assert.match(heredoc(script, 'EXPIRY_SERVICE'), /^ExecStart=\/usr\/local\/sbin\/loadgate-expiry \/etc\/loadgate\/expires-at$/m);
});
