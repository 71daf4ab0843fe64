import type { GateConfigInput } from '../../src/config/schema.ts';
import { parseGateConfig } from '../../src/config/load.ts';
import type { GateConfig } from '../../src/config/schema.ts';

/** A gate config on the AWS bench shaped like the seed release comparison. */
export function awsGate(aws: Record<string, unknown> = {}, overrides: Partial<GateConfigInput> = {}): GateConfig {
  return parseGateConfig(
    {
      version: 1,
      name: 'aws-test',
      target: {
        system: 'mattermost',
        versionPattern: '^v?[0-9]+\\.[0-9]+\\.[0-9]+(-rc[0-9]+)?$',
        settings: { ServiceSettings: { SiteURL: 'http://ltserver' } },
      },
      bench: { kind: 'aws', aws },
      tests: [
        { type: 'bounded', users: 7500, rampUp: '15m', duration: '90m' },
        {
          type: 'unbounded',
          maxUsers: 20000,
          stabilityWindow: '30m',
          maxDuration: '4h',
          health: [{ name: 'p99', query: 'histogram_quantile(0.99, sum(rate(x[1m])) by (le))', threshold: 2 }],
        },
      ],
      ...overrides,
    },
    'test gate',
  );
}

/** `terraform output -json` of a perfcomp bench, in Terraform's format. */
export function terraformOutputs(): Record<string, { sensitive: boolean; type: unknown; value: unknown }> {
  const out = (value: unknown, type: unknown = 'string') => ({ sensitive: false, type, value });
  const list = (values: unknown[]) => out(values, ['tuple', values.map(() => 'string')]);
  return {
    bench_name: out('lg-123456-1'),
    region: out('us-east-1'),
    vpc_id: out('vpc-0a18f1a4cdf62d256'),
    proxy_url: out('http://10.42.100.10'),
    proxy_instance_id: out('i-0123456789abcdef0'),
    app_private_ips: list(['10.42.100.21', '10.42.101.22']),
    app_instance_ids: list(['i-0aaaaaaaaaaaaaaa1', 'i-0aaaaaaaaaaaaaaa2']),
    agent_private_ips: list(['10.42.0.31', '10.42.1.32']),
    agent_public_ips: list(['203.0.113.31', '203.0.113.32']),
    agent_instance_ids: list(['i-0bbbbbbbbbbbbbbb1', 'i-0bbbbbbbbbbbbbbb2']),
    agent_api_port: out(4000, 'number'),
    load_engine: out('load-test-ng'),
    metrics_instance_id: out('i-0cccccccccccccccc'),
    metrics_private_ip: out('10.42.0.10'),
    metrics_public_ip: out('203.0.113.10'),
    prometheus_url: out('http://203.0.113.10:9090'),
    grafana_url: out('http://203.0.113.10:3000'),
    pyroscope_url: out('http://203.0.113.10:4040'),
    grafana_token_secret_arn: out('arn:aws:secretsmanager:us-east-1:123456789012:secret:lg-123456-1/grafana-token-AbCdEf'),
    db_cluster_identifier: out('lg-123456-1'),
    db_writer_endpoint: out('lg-123456-1.cluster-abc.us-east-1.rds.amazonaws.com'),
    db_reader_endpoint: out('lg-123456-1.cluster-ro-abc.us-east-1.rds.amazonaws.com'),
    db_port: out(5432, 'number'),
    db_name: out('ltdb'),
    db_secret_arn: out('arn:aws:secretsmanager:us-east-1:123456789012:secret:rds!cluster-1234-AbCdEf'),
    controller_ingress: out(
      [
        { security_group_id: 'sg-0123456789abcdef1', ip_protocol: 'tcp', from_port: 9090, to_port: 9090, description: 'Prometheus API for the controller' },
        { security_group_id: 'sg-0123456789abcdef1', ip_protocol: 'tcp', from_port: 3000, to_port: 3000, description: 'Grafana API for the controller' },
        { security_group_id: 'sg-0123456789abcdef1', ip_protocol: 'tcp', from_port: 4040, to_port: 4040, description: 'Pyroscope API for the controller' },
        { security_group_id: 'sg-0123456789abcdef2', ip_protocol: 'tcp', from_port: 4000, to_port: 4000, description: 'Agent control API for the controller' },
      ],
      ['tuple', [['object', { security_group_id: 'string' }]]],
    ),
    instances: out({ app: '2 x c7i.2xlarge', agent: '2 x c7i.xlarge', proxy: '1 x c7i.xlarge', metrics: '1 x m7i.xlarge', db: '2 x db.r7g.2xlarge' }, [
      'object',
      { app: 'string' },
    ]),
    duet_slots: out([], ['tuple', []]),
  };
}
