import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PERFCOMP, SEED_CEILING_PRESETS, presetSize } from '../../src/aws/presets.ts';
import { BENCH_OWNED_SETTINGS } from '../../src/chat-servers/mattermost/config-patch.ts';
import { INFRA_DIR, loadModule, moduleDirs, only, resource, ruleObjects, type ModuleJson } from './hcl.ts';

/**
 * The bench's shape, read from the Terraform files themselves (parsed by
 * @cdktn/hcl2json): Terraform cannot be applied or validated here, so these
 * tests pin what must be true by construction.
 */

const variable = (json: ModuleJson, name: string): Record<string, unknown> => only(json.variable[name], `variable ${name}`);
/** A variable's validation blocks, conditions without hcl2json's ${...} wrapper. */
const validations = (json: ModuleJson, name: string): Array<{ condition: string; error_message: string }> =>
  ((variable(json, name).validation as Array<{ condition: string; error_message: string }> | undefined) ?? []).map((v) => ({
    ...v,
    condition: v.condition.replace(/^\$\{([\s\S]*)\}$/, '$1'),
  }));

test('every module has the terraform-aws-modules layout and examples are complete root modules', () => {
  const dirs = moduleDirs();
  assert.ok(dirs.includes('.'), 'the root module is infra/aws');
  const modules = dirs.filter((d) => d.startsWith('modules/'));
  assert.deepEqual(modules, [
    'modules/aurora-postgresql',
    'modules/bench',
    'modules/expiry',
    'modules/instance-role',
    'modules/network',
    'modules/nodes',
    'modules/opensearch',
    'modules/security-group',
  ]);
  for (const dir of ['.', ...modules]) {
    for (const file of ['main.tf', 'variables.tf', 'outputs.tf', 'versions.tf']) {
      assert.ok(existsSync(join(INFRA_DIR, dir, file)), `${dir}/${file} exists`);
    }
  }
  const examples = dirs.filter((d) => d.startsWith('examples/'));
  assert.ok(examples.length >= 2, 'at least two examples');
  for (const dir of examples) {
    for (const file of ['main.tf', 'versions.tf', 'outputs.tf']) assert.ok(existsSync(join(INFRA_DIR, dir, file)), `${dir}/${file} exists`);
  }
});

test('examples call the bench module with a provider that sets default_tags', async () => {
  for (const dir of moduleDirs().filter((d) => d.startsWith('examples/'))) {
    const json = await loadModule(dir);
    const bench = only(json.module.bench, `${dir} module bench`);
    assert.equal(bench.source, '../../modules/bench');
    assert.match(String(bench.mattermost_download_url), /^https:\/\/releases\.mattermost\.com\/[\d.]+\/mattermost-[\d.]+-linux-amd64\.tar\.gz$/);
    const provider = only(json.provider.aws, `${dir} provider aws`);
    const tags = only(provider.default_tags as Array<{ tags: Record<string, string> }>, 'default_tags').tags;
    assert.ok(tags.ExpiresAt && tags.Project === 'loadgate', `${dir} tags its resources`);
    assert.equal(tags.ExpiresAt, '${local.expires_at}', `${dir}: the tag the janitor reads is the bench's own expiry`);
    assert.equal(bench.expires_at, '${local.expires_at}', `${dir}: the bench expires when its tag says`);
  }
});

test('state lives in S3 with native locking and a key given per run at init', async () => {
  const root = await loadModule('.');
  const settings = only(root.terraform, 'terraform block');
  const backend = only((settings.backend as { s3: Array<Record<string, unknown>> }).s3, 's3 backend');
  assert.equal(backend.use_lockfile, true);
  assert.equal(backend.encrypt, true);
  for (const key of ['bucket', 'key', 'region', 'dynamodb_table']) assert.equal(backend[key], undefined, `${key} is not fixed in the file`);
  assert.match(String(settings.required_version), />= 1\.1[1-9]/, 'use_lockfile needs Terraform 1.11+');
  const aws = only(settings.required_providers as Array<{ aws: { source: string; version: string } }>, 'required_providers').aws;
  assert.equal(aws.source, 'hashicorp/aws');
  assert.match(aws.version, />= 6\.0, < 7\.0/);
});

test('the provider tags everything with project, run, commit, state key and ExpiresAt', async () => {
  const root = await loadModule('.');
  const provider = only(root.provider.aws, 'provider aws');
  assert.equal(provider.region, '${var.region}');
  const tags = only(provider.default_tags as Array<{ tags: Record<string, string> }>, 'default_tags').tags;
  assert.deepEqual(tags, {
    Project: 'loadgate',
    Bench: '${var.bench_name}',
    Repository: '${var.repository}',
    RunId: '${var.run_id}',
    RunAttempt: '${tostring(var.run_attempt)}',
    Commit: '${var.commit_sha}',
    StateKey: '${var.state_key}',
    ExpiresAt: '${var.expires_at}',
  });
  const expires = validations(root, 'expires_at');
  assert.ok(
    expires.some((v) => v.condition.includes('formatdate')),
    'ExpiresAt must be a real time',
  );
});

test('the root module declares only the run and passes every bench setting from one object', async () => {
  const root = await loadModule('.');
  const bench = await loadModule('modules/bench');
  const runOnly = ['region', 'bench_name', 'repository', 'run_id', 'run_attempt', 'commit_sha', 'state_key', 'expires_at'];
  assert.deepEqual(Object.keys(root.variable).sort(), [...runOnly, 'bench'].sort(), 'no bench variable is declared twice');
  // The bench's name and expiry are the run's, not bench settings.
  const benchVariables = Object.keys(bench.variable)
    .filter((n) => n !== 'name' && n !== 'expires_at')
    .sort();
  const call = only(root.module.bench, 'module bench');
  assert.equal(call.source, './modules/bench');
  assert.equal(call.name, '${var.bench_name}');
  assert.equal(call.expires_at, '${var.expires_at}');
  for (const name of benchVariables) assert.equal(call[name], `\${try(var.bench.${name}, null)}`, `${name} is passed to the bench`);
  // A setting left out of the object arrives as null, which must mean the module's default.
  for (const name of benchVariables) {
    const body = variable(bench, name);
    if (body.default !== undefined && body.default !== null) assert.equal(body.nullable, false, `${name} falls back to its default on null`);
  }
  assert.deepEqual(Object.keys(root.output).sort(), Object.keys(bench.output).sort());
  for (const name of Object.keys(root.output)) assert.equal(only(root.output[name], name).value, `\${module.bench.${name}}`);
});

test('every variable is described and typed, and the sizes and counts are validated', async () => {
  for (const dir of moduleDirs().filter((d) => !d.startsWith('examples/'))) {
    const json = await loadModule(dir);
    for (const [name, bodies] of Object.entries(json.variable)) {
      const body = only(bodies, `${dir} variable ${name}`);
      assert.ok(typeof body.description === 'string' && body.description.length > 10, `${dir} ${name} has a description`);
      assert.ok(typeof body.type === 'string', `${dir} ${name} has a type`);
    }
  }
  const bench = await loadModule('modules/bench');
  const validated = [
    'name',
    'vpc_cidr',
    'controller_cidr_blocks',
    'ssh_cidr_blocks',
    'ami_id',
    'app_instance_type',
    'app_count',
    'agent_instance_type',
    'agent_count',
    'proxy_instance_type',
    'metrics_instance_type',
    'db_instance_class',
    'db_count',
    'db_engine_version',
    'db_snapshot_identifier',
    'db_dump_url',
    'opensearch_count',
    'opensearch_instance_type',
    'mattermost_download_url',
    'mattermost_license_secret_arn',
    'mattermost_config_patch',
    'load_engine',
    'k6_version',
    'loadtest_download_url',
  ];
  for (const name of validated) assert.ok(validations(bench, name).length > 0, `${name} has a validation block`);
  assert.ok(
    validations(bench, 'db_dump_url').some((v) => v.condition.includes('var.db_snapshot_identifier')),
    'snapshot and dump exclude each other',
  );
  assert.ok(validations(bench, 'opensearch_count').some((v) => v.condition === 'contains([0, 2], var.opensearch_count)'));
});

/** Evaluates the two kinds of validation the size variables use: regex() and numeric ranges. */
function satisfies(json: ModuleJson, name: string, value: string | number): boolean {
  return validations(json, name).every(({ condition }) => {
    const regex = /can\(regex\("((?:[^"\\]|\\.)*)", var\.\w+\)\)/.exec(condition);
    if (regex) return new RegExp(JSON.parse(`"${regex[1]}"`) as string).test(String(value));
    const range = /var\.\w+ >= (\d+) && var\.\w+ <= (\d+)/.exec(condition);
    if (range) return Number(value) >= Number(range[1]) && Number(value) <= Number(range[2]);
    const set = /contains\(\[([\d, ]+)\], var\.\w+\)/.exec(condition);
    if (set) return (set[1] as string).split(',').map(Number).includes(Number(value));
    const suffix = /endswith\(var\.\w+, "([^"]+)"\)/.exec(condition);
    if (suffix) return String(value).endsWith(suffix[1] as string);
    throw new Error(`no evaluator for ${name}'s condition ${condition}`);
  });
}

test('the bench defaults are the perfcomp preset and every seed preset passes the variable validations', async () => {
  const bench = await loadModule('modules/bench');
  const defaults = (name: string): unknown => variable(bench, name).default;
  assert.equal(defaults('app_instance_type'), PERFCOMP.appInstanceType);
  assert.equal(defaults('app_count'), PERFCOMP.appCount);
  assert.equal(defaults('agent_instance_type'), PERFCOMP.agentInstanceType);
  assert.equal(defaults('agent_count'), PERFCOMP.agentCount);
  assert.equal(defaults('proxy_instance_type'), PERFCOMP.proxyInstanceType);
  assert.equal(defaults('metrics_instance_type'), PERFCOMP.metricsInstanceType);
  assert.equal(defaults('db_instance_class'), PERFCOMP.dbInstanceType);
  assert.equal(defaults('db_count'), PERFCOMP.dbCount);
  assert.equal(defaults('opensearch_count'), PERFCOMP.openSearchCount);
  assert.equal(defaults('opensearch_instance_type'), PERFCOMP.openSearchInstanceType);
  assert.deepEqual(
    [PERFCOMP.appCount, PERFCOMP.appInstanceType, PERFCOMP.agentCount, PERFCOMP.agentInstanceType, PERFCOMP.dbCount, PERFCOMP.dbInstanceType],
    [2, 'c7i.2xlarge', 11, 'c7i.xlarge', 2, 'db.r7g.2xlarge'],
  );
  for (const name of ['perfcomp', ...SEED_CEILING_PRESETS]) {
    const size = presetSize(name);
    const values: Array<[string, string | number]> = [
      ['app_instance_type', size.appInstanceType],
      ['app_count', size.appCount],
      ['agent_instance_type', size.agentInstanceType],
      ['proxy_instance_type', size.proxyInstanceType],
      ['metrics_instance_type', size.metricsInstanceType],
      ['db_instance_class', size.dbInstanceType],
      ['db_count', size.dbCount],
      ['opensearch_count', size.openSearchCount],
      ['opensearch_instance_type', size.openSearchInstanceType],
    ];
    for (const [variableName, value] of values) assert.ok(satisfies(bench, variableName, value), `${name}: ${variableName} = ${value} passes validation`);
  }
  assert.ok(!satisfies(bench, 'opensearch_count', 1), 'one OpenSearch node is rejected');
  assert.ok(!satisfies(bench, 'app_count', 0) && !satisfies(bench, 'app_count', 21));
  assert.ok(!satisfies(bench, 'db_instance_class', 'r7g.2xlarge'), 'a DB class needs the db. prefix');
});

test('Aurora PostgreSQL: engine, parameters of the seed benches, encryption, no final snapshot', async () => {
  const bench = await loadModule('modules/bench');
  assert.deepEqual(variable(bench, 'db_cluster_parameters').default, [
    { name: 'random_page_cost', value: '1.1', apply_method: 'immediate' },
    { name: 'work_mem', value: '32768', apply_method: 'immediate' },
  ]);
  const db = only(bench.module.db, 'module db');
  assert.equal(db.cluster_parameters, '${var.db_cluster_parameters}');
  assert.equal(db.snapshot_identifier, '${var.db_snapshot_identifier}');
  const aurora = await loadModule('modules/aurora-postgresql');
  const cluster = resource(aurora, 'aws_rds_cluster', 'this');
  assert.equal(cluster.engine, 'aurora-postgresql');
  assert.equal(cluster.skip_final_snapshot, true);
  assert.equal(cluster.storage_encrypted, true);
  assert.equal(cluster.deletion_protection, false);
  assert.equal(cluster.manage_master_user_password, true, 'the password is never in state or user data');
  assert.equal(cluster.master_password, undefined);
  assert.equal(cluster.snapshot_identifier, '${var.snapshot_identifier}');
  assert.equal(cluster.db_cluster_parameter_group_name, '${aws_rds_cluster_parameter_group.this.name}');
  const group = resource(aurora, 'aws_rds_cluster_parameter_group', 'this');
  assert.equal(group.family, '${local.family}');
  assert.match(JSON.stringify(aurora.locals), /aurora-postgresql\$\{split\(\\"\.\\", var\.engine_version\)\[0\]\}/);
  const dynamic = group.dynamic as { parameter: Array<{ for_each: string }> };
  assert.equal(only(dynamic.parameter, 'dynamic parameter').for_each, '${var.cluster_parameters}', 'parameters come from the variable');
  const instance = resource(aurora, 'aws_rds_cluster_instance', 'this');
  assert.equal(instance.count, '${var.instance_count}');
  assert.equal(instance.publicly_accessible, false);
  assert.equal(variable(aurora, 'instance_count').default, 2, 'one writer, one reader by default');
});

test('EC2 nodes: IMDSv2 only, encrypted root volumes, compressed per-node user data', async () => {
  const nodes = await loadModule('modules/nodes');
  const instance = resource(nodes, 'aws_instance', 'this');
  const metadata = only(instance.metadata_options as Array<Record<string, unknown>>, 'metadata_options');
  assert.equal(metadata.http_tokens, 'required');
  assert.equal(metadata.http_put_response_hop_limit, 1);
  const root = only(instance.root_block_device as Array<Record<string, unknown>>, 'root_block_device');
  assert.equal(root.encrypted, true);
  assert.equal(root.volume_type, 'gp3');
  assert.equal(instance.user_data_base64, '${base64gzip(local.user_data[count.index])}');
  assert.equal(instance.associate_public_ip_address, '${var.associate_public_ip_address}');
  assert.equal(variable(nodes, 'associate_public_ip_address').default, false);
  const bench = await loadModule('modules/bench');
  const publicRoles = Object.entries(bench.module)
    .filter(([, bodies]) => only(bodies, 'module').associate_public_ip_address === true)
    .map(([name]) => name)
    .sort();
  assert.deepEqual(publicRoles, ['agent', 'metrics'], 'only the nodes the controller reaches have public addresses');
  for (const role of ['app', 'proxy']) assert.deepEqual(only(bench.module[role], role).subnet_ids !== undefined, true);
  assert.match(String(only(bench.module.app, 'app').subnet_ids), /private_subnet_ids/);
  assert.match(String(only(bench.module.proxy, 'proxy').subnet_ids), /private_subnet_ids/);
});

/**
 * A role's local.controller_ports entries: a literal list, or concat([always], [for rule
 * in [duet only] : rule if var.duet]) as HCL text; `duet` picks the second part.
 */
function controllerPorts(bench: ModuleJson, role: string, duet = false): Array<Record<string, unknown>> {
  const raw = (only(bench.locals, 'locals') as { controller_ports: Record<string, unknown> }).controller_ports[role];
  if (raw === undefined) return [];
  if (Array.isArray(raw)) return duet ? [] : (raw as Array<Record<string, unknown>>);
  const text = String(raw);
  const parts = text.split(/\]\s*,\s*\[\s*for rule in/);
  assert.equal(parts.length, 2, `controller_ports.${role} is concat([...], [for rule in [...] : rule if var.duet]): ${text}`);
  if (duet) assert.match(parts[1]!, /: rule if var\.duet\s*\]\)\}?$/);
  return [...(parts[duet ? 1 : 0] as string).matchAll(/\{\s*description\s*=\s*"([^"]*)",\s*from_port\s*=\s*([^,]+),\s*to_port\s*=\s*([^,}]+?)\s*\}/g)].map(
    (m) => ({
      description: m[1],
      from_port: m[2]!.trim(),
      to_port: m[3]!.trim(),
    }),
  );
}

test('security groups: each role opens only its own ports, SSH is closed unless ssh_cidr_blocks is set', async () => {
  const bench = await loadModule('modules/bench');
  // An expression comes back as its HCL text, a literal list as JSON objects.
  const rulesOf = (role: string): ReturnType<typeof ruleObjects> => {
    const rules = only(bench.module[`${role}_sg`], `${role}_sg`).ingress_rules;
    if (typeof rules === 'string') {
      // The controller's rules: one per local.controller_ports entry of the role and controller range.
      const ports = controllerPorts(bench, role);
      const controller = rules.includes(`for rule in local.controller_ports.${role} : merge(rule, { cidr_ipv4 = cidr })`)
        ? ports.map((p) => ({
            description: String(p.description),
            protocol: 'tcp',
            from: String(p.from_port).replace(/^\$\{(.*)\}$/, '$1'),
            to: String(p.to_port).replace(/^\$\{(.*)\}$/, '$1'),
            source: 'cidr_ipv4 = cidr',
          }))
        : [];
      return [...controller, ...ruleObjects(rules)];
    }
    return (rules as Array<Record<string, unknown>>).map((rule) => ({
      description: String(rule.description),
      protocol: String(rule.ip_protocol ?? 'tcp'),
      from: String(rule.from_port),
      to: String(rule.to_port),
      source: Object.entries(rule)
        .filter(([key]) => !['description', 'ip_protocol', 'from_port', 'to_port'].includes(key))
        .map(([key, value]) => `${key} = ${String(value).replace(/^\$\{(.*)\}$/, '$1')}`)
        .join(', '),
    }));
  };
  const locals = only(bench.locals, 'locals block') as {
    node_exporter_rule: Record<string, unknown>;
    egress_rules: Array<{ cidr_ipv4: string; from_port: number; to_port: number }>;
    ssh_rules: string;
  };
  assert.deepEqual(locals.node_exporter_rule, {
    description: 'node_exporter scraped by the metrics node',
    from_port: 9100,
    to_port: 9100,
    referenced_security_group_id: '${module.metrics_sg.id}',
  });

  const summary = (role: string): string[] =>
    rulesOf(role)
      .map((r) => `${r.protocol} ${r.from}-${r.to} ${r.source}`)
      .sort();
  assert.deepEqual(summary('app'), [
    'tcp 8065-8065 referenced_security_group_id = module.agent_sg.id',
    'tcp 8065-8065 referenced_security_group_id = module.proxy_sg.id',
    'tcp 8067-8067 referenced_security_group_id = module.metrics_sg.id',
    'tcp 8074-8075 self = true',
    // Mattermost's cluster gossip speaks UDP too, between app nodes only.
    'udp 8074-8074 self = true',
  ]);
  assert.deepEqual(summary('proxy'), ['tcp 80-80 referenced_security_group_id = module.agent_sg.id']);
  assert.deepEqual(summary('db'), ['tcp 5432-5432 referenced_security_group_id = module.app_sg.id']);
  assert.deepEqual(summary('opensearch'), ['tcp 443-443 referenced_security_group_id = module.app_sg.id']);
  // The controller reaches the agents' engine API; the metrics node scrapes their exporter.
  assert.deepEqual(summary('agent'), [
    'tcp local.agent_api_port-local.agent_api_port cidr_ipv4 = cidr',
    'tcp local.agent_metrics_port-local.agent_metrics_port referenced_security_group_id = module.metrics_sg.id',
  ]);
  // The controller reaches Prometheus, Grafana and Pyroscope (pyroscope_url), nothing else of the metrics node.
  assert.deepEqual(summary('metrics'), [
    'tcp 3000-3000 cidr_ipv4 = cidr',
    'tcp 9090-9090 cidr_ipv4 = cidr',
    'tcp local.pyroscope_port-local.pyroscope_port cidr_ipv4 = cidr',
  ]);
  const locals0 = only(bench.locals, 'locals') as Record<string, unknown>;
  assert.equal(locals0.agent_metrics_port, '${var.load_engine == "k6" ? 6566 : local.agent_api_port}');
  // Gossip's UDP must also be allowed out of the app nodes (egress rules are TCP otherwise).
  assert.match(String(only(bench.module.app_sg, 'app_sg').egress_rules), /local\.app_egress_rules/);
  assert.match(JSON.stringify(locals0.app_egress_rules), /ip_protocol = \\"udp\\", from_port = 8074, to_port = 8074, cidr_ipv4 = var\.vpc_cidr/);
  // Every cidr_ipv4 ingress rule comes from the controller or SSH lists, whose entries are /16 or narrower.
  for (const name of ['controller_cidr_blocks', 'ssh_cidr_blocks']) {
    assert.ok(
      validations(bench, name).some((v) => v.condition.includes('tonumber(split("/", c)[1]) >= 16')),
      `${name} refuses ranges wider than /16`,
    );
  }
  // Controller ranges come only from var.controller_cidr_blocks; the ports the run jobs
  // admit themselves to (output controller_ingress) are the same local.controller_ports.
  const outputs = await loadModule('modules/bench');
  assert.match(JSON.stringify(outputs.output.controller_ingress), /local\.controller_ports\[role\]/);
  for (const role of ['agent', 'metrics']) {
    assert.match(String(only(bench.module[`${role}_sg`], role).ingress_rules), /for cidr in var\.controller_cidr_blocks/);
  }
  // node_exporter and SSH are added to every node role; the data stores get neither.
  for (const role of ['app', 'proxy', 'agent']) assert.match(String(only(bench.module[`${role}_sg`], role).ingress_rules), /local\.node_exporter_rule/);
  for (const role of ['app', 'proxy', 'agent', 'metrics']) assert.match(String(only(bench.module[`${role}_sg`], role).ingress_rules), /local\.ssh_rules/);
  for (const role of ['db', 'opensearch']) assert.doesNotMatch(String(only(bench.module[`${role}_sg`], role).ingress_rules), /ssh|22/);

  // SSH: rules exist only per entry of ssh_cidr_blocks, which is empty by default and never /0.
  const ssh = ruleObjects(locals.ssh_rules);
  assert.deepEqual(
    ssh.map((r) => [r.from, r.to, r.source]),
    [['22', '22', 'cidr_ipv4 = cidr']],
  );
  assert.match(locals.ssh_rules, /for cidr in var\.ssh_cidr_blocks/);
  assert.deepEqual(variable(bench, 'ssh_cidr_blocks').default, []);
  assert.ok(validations(bench, 'ssh_cidr_blocks').some((v) => v.condition.includes('>= 16')));

  // No ingress from anywhere: 0.0.0.0/0 appears only in egress, on ports 80 and 443.
  for (const role of ['app', 'proxy', 'agent', 'metrics', 'db', 'opensearch']) {
    assert.doesNotMatch(String(only(bench.module[`${role}_sg`], role).ingress_rules), /0\.0\.0\.0\/0/);
  }
  const worldEgress = locals.egress_rules.filter((r) => r.cidr_ipv4 === '0.0.0.0/0').map((r) => [r.from_port, r.to_port]);
  assert.deepEqual(worldEgress, [
    [80, 80],
    [443, 443],
  ]);
  assert.equal((JSON.stringify(bench).match(/0\.0\.0\.0\/0/g) ?? []).length, 2, '0.0.0.0/0 appears nowhere else in the bench');

  // A duet's slot b: the same paths on its own ports, and only when var.duet.
  const duetRules = (name: string): string[] => {
    const text = String((only(bench.locals, 'locals') as Record<string, unknown>)[name]);
    assert.match(text, /^\$\{\[\s*for rule in \[[\s\S]*\] : rule if var\.duet\s*\]\}$/, `${name} is empty unless var.duet`);
    return ruleObjects(text)
      .map((r) => `${r.protocol} ${r.from}-${r.to} ${r.source}`)
      .sort();
  };
  assert.deepEqual(duetRules('duet_app_ingress_rules'), [
    'tcp 8165-8165 referenced_security_group_id = module.agent_sg.id',
    'tcp 8165-8165 referenced_security_group_id = module.proxy_sg.id',
    'tcp 8167-8167 referenced_security_group_id = module.metrics_sg.id',
    'tcp 8174-8174 self = true',
    'udp 8174-8174 self = true',
  ]);
  assert.deepEqual(duetRules('duet_proxy_ingress_rules'), ['tcp 8080-8080 referenced_security_group_id = module.agent_sg.id']);
  assert.match(String(only(bench.module.app_sg, 'app_sg').ingress_rules), /local\.duet_app_ingress_rules/);
  assert.match(String(only(bench.module.proxy_sg, 'proxy_sg').ingress_rules), /local\.duet_proxy_ingress_rules/);
  assert.deepEqual(
    controllerPorts(bench, 'metrics', true).map((p) => `${p.from_port}-${p.to_port}`),
    ['9091-9091'],
    "the controller reaches slot b's Prometheus",
  );
  assert.match(
    JSON.stringify(locals0.app_egress_rules),
    /for rule in \[\\n\s*\{ description = \\"Duet slot b cluster gossip \(UDP\)[^}]*ip_protocol = \\"udp\\", from_port = 8174, to_port = 8174, cidr_ipv4 = var\.vpc_cidr \},\\n\s*\] : rule if var\.duet/,
  );
  const remoteWriteB = resource(bench, 'aws_vpc_security_group_ingress_rule', 'metrics_b_from_agents');
  assert.deepEqual([remoteWriteB.count, remoteWriteB.from_port, remoteWriteB.to_port], ['${var.duet ? 1 : 0}', 9091, 9091]);

  const sgModule = await loadModule('modules/security-group');
  const guard = validations(sgModule, 'ingress_rules').find((v) => v.condition.includes('0.0.0.0/0'));
  assert.ok(guard && /from_port <= 22 && r\.to_port >= 22/.test(guard.condition), 'the module itself refuses world-open SSH');
});

test('OpenSearch is optional (0 or 2 nodes), in the VPC, encrypted, HTTPS only', async () => {
  const bench = await loadModule('modules/bench');
  assert.equal(only(bench.module.opensearch, 'opensearch').count, '${var.opensearch_count > 0 ? 1 : 0}');
  assert.equal(variable(bench, 'opensearch_count').default, 0);
  const search = await loadModule('modules/opensearch');
  const domain = resource(search, 'aws_opensearch_domain', 'this');
  assert.equal(only(domain.encrypt_at_rest as Array<Record<string, unknown>>, 'encrypt_at_rest').enabled, true);
  assert.equal(only(domain.node_to_node_encryption as Array<Record<string, unknown>>, 'node_to_node_encryption').enabled, true);
  assert.equal(only(domain.domain_endpoint_options as Array<Record<string, unknown>>, 'domain_endpoint_options').enforce_https, true);
  assert.ok(domain.vpc_options, 'the domain lives in the VPC');
});

test('the network spans two availability zones with private subnets behind a NAT gateway', async () => {
  const network = await loadModule('modules/network');
  assert.equal(resource(network, 'aws_subnet', 'public').count, '${length(var.availability_zones)}');
  assert.equal(resource(network, 'aws_subnet', 'public').map_public_ip_on_launch, false);
  assert.equal(resource(network, 'aws_subnet', 'private').map_public_ip_on_launch, false);
  assert.ok(validations(network, 'availability_zones').some((v) => v.condition.includes('length(var.availability_zones) == 2')));
  // The VPC's default group is not adopted (tag-scoped IAM cannot allow that); instead
  // nothing is ever placed in it: every instance, the cluster and the domain name a group.
  assert.equal(network.resource.aws_default_security_group, undefined);
  const bench = await loadModule('modules/bench');
  for (const [name, bodies] of Object.entries(bench.module)) {
    if (['app', 'agent', 'proxy', 'metrics'].includes(name))
      assert.match(String(only(bodies, name).security_group_ids), /module\.\w+_sg\.id/, `${name} names its group`);
  }
  assert.match(String(only(bench.module.db, 'db').security_group_ids), /module\.db_sg\.id/);
  assert.match(String(only(bench.module.opensearch, 'opensearch').security_group_ids), /module\.opensearch_sg\[0\]\.id/);
  assert.ok(resource(network, 'aws_nat_gateway', 'this'));
});

test('the proxy and metrics node get fixed addresses from ranges AWS never assigns to other nodes', async () => {
  const network = await loadModule('modules/network');
  for (const tier of ['public', 'private']) {
    const reservation = resource(network, 'aws_ec2_subnet_cidr_reservation', `${tier}_fixed`);
    assert.equal(reservation.reservation_type, 'explicit');
    assert.equal(reservation.subnet_id, `\${aws_subnet.${tier}[0].id}`);
    const ids = only(network.output[`${tier}_subnet_ids`], `${tier}_subnet_ids`);
    assert.deepEqual(ids.depends_on, [`\${aws_ec2_subnet_cidr_reservation.${tier}_fixed}`], 'instances launch after the reservation');
  }
  const bench = await loadModule('modules/bench');
  const locals = only(bench.locals, 'locals') as Record<string, string>;
  assert.equal(locals.proxy_private_ip, '${cidrhost(module.network.private_fixed_cidr_block, 2)}');
  assert.equal(locals.metrics_private_ip, '${cidrhost(module.network.public_fixed_cidr_block, 2)}');
  assert.deepEqual(only(bench.module.proxy, 'proxy').private_ips, ['${local.proxy_private_ip}']);
  assert.deepEqual(only(bench.module.metrics, 'metrics').private_ips, ['${local.metrics_private_ip}']);
});

test('checkov exceptions are justified inline', async () => {
  const { readFileSync } = await import('node:fs');
  for (const dir of moduleDirs()) {
    for (const file of ['main.tf', 'variables.tf', 'outputs.tf', 'versions.tf']) {
      const path = join(INFRA_DIR, dir, file);
      if (!existsSync(path)) continue;
      for (const line of readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l.includes('checkov:skip'))) {
        assert.match(line, /#checkov:skip=CKV2?_AWS_\d+:\S.{20,}/, `${dir}/${file}: "${line.trim()}" names a check and a reason`);
      }
    }
  }
});

test('the Aurora log export goes to a managed, encrypted log group with a retention, created first', async () => {
  const aurora = await loadModule('modules/aurora-postgresql');
  const group = resource(aurora, 'aws_cloudwatch_log_group', 'postgresql');
  assert.equal(group.name, '/aws/rds/cluster/${var.name}/postgresql', 'the name RDS exports to');
  assert.equal(group.retention_in_days, '${var.log_retention_days}');
  assert.equal(group.kms_key_id, '${var.kms_key_arn}');
  assert.equal(variable(aurora, 'log_retention_days').default, 7);
  const cluster = resource(aurora, 'aws_rds_cluster', 'this');
  assert.deepEqual(cluster.enabled_cloudwatch_logs_exports, ['postgresql']);
  assert.deepEqual(cluster.depends_on, ['${aws_cloudwatch_log_group.postgresql}'], 'otherwise RDS creates an unmanaged group first');
  // The bench key lets CloudWatch Logs encrypt this account's log groups.
  const bench = await loadModule('modules/bench');
  const policy = JSON.stringify(bench.data.aws_iam_policy_document?.kms);
  assert.match(policy, /logs\.\$\{local\.region\}\.amazonaws\.com/);
  assert.match(policy, /kms:EncryptionContext:aws:logs:arn/);
});

test('a single app node gets no proxy: it is reached directly at a reserved address', async () => {
  const bench = await loadModule('modules/bench');
  const locals = only(bench.locals, 'locals') as Record<string, string>;
  assert.equal(locals.proxy_enabled, '${var.app_count > 1}');
  assert.equal(only(bench.module.proxy, 'proxy').count, '${local.proxy_instance_count}');
  assert.equal(locals.single_app_ip, '${cidrhost(module.network.private_fixed_cidr_block, 3)}');
  assert.equal(only(bench.module.app, 'app').private_ips, '${local.proxy_enabled ? [] : [local.single_app_ip]}');
  assert.match(locals.proxy_url as string, /local\.proxy_enabled \? "http:\/\/\$\{local\.proxy_private_ip\}" : "http:\/\/\$\{local\.single_app_ip\}:8065"/);
  assert.equal(only(bench.output.proxy_instance_id, 'proxy_instance_id').value, '${local.proxy_instance_id}');
  // Provider 6 deprecates aws_region's name and id for region (the real provider warns on both).
  assert.equal(locals.region, '${data.aws_region.current.region}');
  for (const dir of moduleDirs())
    assert.doesNotMatch(JSON.stringify(await loadModule(dir)), /aws_region\.current\.(name|id)\b/, `${dir} uses no deprecated region name or id`);
});

test('the Grafana token secret replaces the admin password, and patches cannot rewire the bench', async () => {
  const bench = await loadModule('modules/bench');
  assert.equal(resource(bench, 'aws_secretsmanager_secret', 'grafana_token').name, '${var.name}/grafana-token');
  assert.equal(bench.resource.aws_secretsmanager_secret?.grafana_admin, undefined);
  assert.deepEqual(only(bench.module.metrics_role, 'metrics_role').writable_secret_arns, ['${aws_secretsmanager_secret.grafana_token.arn}']);
  const patch = validations(bench, 'mattermost_config_patch').find((v) => v.condition.includes('DataSource'));
  assert.ok(patch, 'mattermost_config_patch refuses the bench-owned settings');
  const inTerraform = [...patch.condition.matchAll(/\["(\w+)", "(\w+)"\]/g)].map((m) => `${m[1]}.${m[2]}`).sort();
  assert.deepEqual(inTerraform, [...BENCH_OWNED_SETTINGS].sort(), 'Terraform and config-patch.ts own the same keys');
});
