import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { synapseConfig, synapseConfigYaml, synapseLogConfig, RATE_LIMITS, SERVER_NAME } from '../../../src/chat-servers/synapse/config.ts';
import { parseOverride } from '../../../src/chat-servers/synapse/overrides.ts';

const input = {
  clientPort: 18008,
  metricsPort: 19000,
  publicBaseUrl: 'http://127.0.0.1:18080',
  database: { host: '127.0.0.1', port: 15432, user: 'loadgate', password: 'pw', name: 'synapse' },
  dir: '/tmp/run/synapse',
  logConfigPath: '/tmp/run/synapse/log.yaml',
  signingKeyPath: '/tmp/run/signing.key',
  registrationSharedSecret: 'secret',
  overrides: [],
};

type Listener = { port: number; bind_addresses: string[]; type: string; resources?: { names: string[] }[] };

test('homeserver.yaml: loopback listeners (client + metrics), no federation, no outbound features', () => {
  const c = parse(synapseConfigYaml(input)) as Record<string, unknown>;
  assert.equal(c.server_name, SERVER_NAME);
  const listeners = c.listeners as Listener[];
  assert.equal(listeners.length, 2);
  for (const l of listeners) assert.deepEqual(l.bind_addresses, ['127.0.0.1']);
  assert.deepEqual(
    listeners.map((l) => [l.type, l.port]),
    [
      ['http', 18008],
      ['metrics', 19000],
    ],
  );
  assert.deepEqual(
    listeners[0]!.resources!.flatMap((r) => r.names),
    ['client'],
    'no federation resource',
  );
  assert.equal(c.enable_metrics, true);
  assert.deepEqual(c.trusted_key_servers, []);
  assert.deepEqual(c.federation_domain_whitelist, []);
  assert.equal(c.report_stats, false);
  assert.equal(c.url_preview_enabled, false);
  assert.deepEqual(c.presence, { enabled: false });
  assert.equal(c.registration_shared_secret, 'secret');
  assert.equal(c.enable_registration, false);
  assert.deepEqual(c.database, {
    name: 'psycopg2',
    args: { user: 'loadgate', password: 'pw', dbname: 'synapse', host: '127.0.0.1', port: 15432, cp_min: 5, cp_max: 10 },
  });
});

test('rate limits are raised for every limiter the bench can hit', () => {
  const c = synapseConfig(input);
  for (const key of ['rc_message', 'rc_login', 'rc_registration', 'rc_joins', 'rc_invites', 'rc_user_directory', 'rc_room_creation']) {
    assert.ok(key in RATE_LIMITS && key in c, key);
  }
  const login = c.rc_login as Record<string, { per_second: number; burst_count: number }>;
  for (const part of ['address', 'account', 'failed_attempts']) assert.ok(login[part]!.per_second >= 1000 && login[part]!.burst_count >= 1000);
});

test('side overrides change only the keys they name', () => {
  const base = synapseConfig(input);
  const slow = synapseConfig({
    ...input,
    overrides: [parseOverride('bcrypt_rounds=14', '--candidate-set'), parseOverride('caches.global_factor=0.05', '--candidate-set')],
  });
  assert.equal(base.bcrypt_rounds, 12);
  assert.equal(slow.bcrypt_rounds, 14);
  assert.deepEqual(slow.caches, { global_factor: 0.05 });
  assert.deepEqual({ ...slow, bcrypt_rounds: 12, caches: base.caches }, base);
});

test('log config: Synapse context filter, access log quiet', () => {
  const log = parse(synapseLogConfig()) as {
    filters: Record<string, Record<string, string>>;
    handlers: Record<string, { filters: string[] }>;
    loggers: Record<string, { level: string }>;
  };
  assert.equal(log.filters.context!['()'], 'synapse.logging.context.LoggingContextFilter');
  assert.deepEqual(log.handlers.console!.filters, ['context']);
  assert.equal(log.loggers['synapse.access.http']!.level, 'WARNING');
});
