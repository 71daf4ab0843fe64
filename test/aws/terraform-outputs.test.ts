import { test } from 'node:test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { OUTPUT_NAMES, awsBenchDescriptionSchema, parseTerraformOutputs, parseTerraformOutputsText } from '../../src/aws/terraform-outputs.ts';
import { InputError } from '../../src/util/errors.ts';
import { terraformOutputs } from './fixtures.ts';
import { loadModule } from './hcl.ts';

/** Outputs the workflow reads beside the bench description (action/lib/provision.sh). */
const WORKFLOW_OUTPUTS = ['controller_ingress'];

test('the parser and the workflow read exactly the outputs infra/aws declares', async () => {
  const root = await loadModule('.');
  assert.deepEqual([...OUTPUT_NAMES, ...WORKFLOW_OUTPUTS].sort(), Object.keys(root.output).sort());
  const provision = readFileSync(join(import.meta.dirname, '..', '..', 'action', 'lib', 'provision.sh'), 'utf8');
  for (const name of WORKFLOW_OUTPUTS) assert.ok(provision.includes(`.${name}?.value`), `provision.sh reads ${name}`);
});

test('terraform output -json becomes a typed bench description', () => {
  const bench = parseTerraformOutputs(terraformOutputs(), 'outputs.json');
  assert.equal(bench.benchName, 'lg-123456-1');
  assert.deepEqual(bench.proxy, { url: 'http://10.42.100.10', instanceId: 'i-0123456789abcdef0' });
  assert.deepEqual(bench.app.privateIps, ['10.42.100.21', '10.42.101.22']);
  assert.deepEqual(bench.agents.publicIps, ['203.0.113.31', '203.0.113.32']);
  assert.equal(bench.agents.apiPort, 4000);
  assert.equal(bench.agents.engine, 'load-test-ng');
  assert.equal(bench.metrics.prometheusUrl, 'http://203.0.113.10:9090');
  assert.equal(bench.database.port, 5432);
  assert.equal(bench.openSearchEndpoint, null, 'Terraform leaves a null output out');
  assert.equal(bench.instances.db, '2 x db.r7g.2xlarge');

  const withSearch = { ...terraformOutputs(), opensearch_endpoint: { sensitive: false, type: 'string', value: 'vpc-lg-1-abc.us-east-1.es.amazonaws.com' } };
  assert.equal(parseTerraformOutputs(withSearch, 'x').openSearchEndpoint, 'vpc-lg-1-abc.us-east-1.es.amazonaws.com');
});

test('missing and malformed outputs are named', () => {
  const outputs = terraformOutputs();
  delete (outputs as Record<string, unknown>).prometheus_url;
  delete (outputs as Record<string, unknown>).db_secret_arn;
  outputs.agent_public_ips = { sensitive: false, type: 'list', value: ['203.0.113.31', 'not-an-ip'] };
  outputs.db_port = { sensitive: false, type: 'string', value: '5432' };
  assert.throws(
    () => parseTerraformOutputs(outputs, 'outputs.json'),
    (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.match(error.message, /^outputs\.json does not describe a loadgate AWS bench:/);
      assert.deepEqual(error.problems, [
        'missing outputs: prometheus_url, db_secret_arn (was the bench applied from this version of infra/aws, and has the apply finished?)',
        'agent_public_ips[1]: expected an IPv4 address',
        'db_port: Invalid input: expected number, received string',
      ]);
      return true;
    },
  );
});

test('text that is not terraform output is refused clearly', () => {
  assert.throws(() => parseTerraformOutputsText('{"a": 1', 'stdin'), /stdin is not JSON .*terraform output -json/);
  assert.throws(() => parseTerraformOutputsText('{"proxy_url": "http://x"}', 'f.json'), /f\.json is not the output of `terraform output -json`:\nproxy_url: /);
  assert.throws(() => parseTerraformOutputsText('{}', 'empty.json'), /missing outputs: bench_name, region/);
});

test('a single app node has no proxy: its instance ID is null and the description still parses', () => {
  const outputs = { ...terraformOutputs(), proxy_url: { sensitive: false, type: 'string', value: 'http://10.42.100.11:8065' } };
  delete (outputs as Record<string, unknown>).proxy_instance_id; // Terraform leaves null outputs out
  const bench = parseTerraformOutputs(outputs, 'outputs.json');
  assert.deepEqual(bench.proxy, { url: 'http://10.42.100.11:8065', instanceId: null });
});

test('bench.json (what tf-outputs prints) is read back by the same schema, and anything else is refused', () => {
  const bench = parseTerraformOutputs(terraformOutputs(), 'outputs.json');
  assert.equal(bench.kind, 'aws');
  assert.deepEqual(awsBenchDescriptionSchema.parse(JSON.parse(JSON.stringify(bench))), bench);
  assert.equal(bench.metrics.grafanaTokenSecretArn, 'arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-123456-1/grafana-token-AbCdEf');
  const local = awsBenchDescriptionSchema.safeParse({ kind: 'local', host: '127.0.0.1' });
  assert.equal(local.success, false);
  const tampered = awsBenchDescriptionSchema.safeParse({ ...bench, agents: { ...bench.agents, publicIps: ['203.0.113.31; reboot'] } });
  assert.equal(tampered.success, false);
});

test("a duet bench's slots are read, checked to split the agents, and empty on a sequential bench", () => {
  const raw = terraformOutputs() as Record<string, { sensitive: boolean; type: unknown; value: unknown }>;
  assert.deepEqual(parseTerraformOutputs(raw, 'outputs.json').duetSlots, []);
  const slot = (name: string, agents: number[], port: number) => ({
    slot: name,
    proxy_url: `http://10.42.100.10:${port === 8065 ? 80 : 8080}`,
    prometheus_url: `http://203.0.113.10:${port === 8065 ? 9090 : 9091}`,
    app_port: port,
    metrics_port: port + 2,
    agent_indices: agents,
  });
  const duet = { ...raw, duet_slots: { sensitive: false, type: 'tuple', value: [slot('a', [0], 8065), slot('b', [1], 8165)] } };
  const parsed = parseTerraformOutputs(duet, 'outputs.json');
  assert.deepEqual(
    parsed.duetSlots.map((s) => [s.slot, s.proxyUrl, s.prometheusUrl, s.appPort, s.agentIndices]),
    [
      ['a', 'http://10.42.100.10:80', 'http://203.0.113.10:9090', 8065, [0]],
      ['b', 'http://10.42.100.10:8080', 'http://203.0.113.10:9091', 8165, [1]],
    ],
  );
  assert.deepEqual(awsBenchDescriptionSchema.parse(JSON.parse(JSON.stringify(parsed))), parsed, 'bench.json round-trips');
  const refused = (value: unknown[]) => () => parseTerraformOutputs({ ...raw, duet_slots: { sensitive: false, type: 'tuple', value } }, 'outputs.json');
  assert.throws(refused([slot('b', [1], 8165), slot('a', [0], 8065)]), /duet_slots must be empty or hold slots a and b, in that order/);
  assert.throws(refused([slot('a', [0, 1], 8065), slot('b', [1], 8165)]), /duet_slots must split the agents 0\.\.1 between the two slots, each agent once/);
  assert.throws(refused([slot('a', [0], 8065), { ...slot('b', [1], 8165), proxy_url: 'proxy:8080' }]), /duet_slots\[1\]\.proxy_url: expected an http\(s\) URL/);
});
