import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyOverrides, parseOverride, settingsToOverrides } from '../../../src/chat-servers/synapse/overrides.ts';
import { InputError } from '../../../src/util/errors.ts';

test('key=value: dotted keys and YAML scalar values', () => {
  assert.deepEqual(parseOverride('bcrypt_rounds=14', '--candidate-set'), { path: ['bcrypt_rounds'], value: 14, text: 'bcrypt_rounds=14' });
  assert.deepEqual(parseOverride('caches.global_factor=0.05', '--candidate-set').path, ['caches', 'global_factor']);
  assert.equal(parseOverride('enable_search=false', '--x').value, false);
  assert.equal(parseOverride('caches.expire_caches=null', '--x').value, null);
  assert.equal(parseOverride('event_cache_size="5K"', '--x').value, '5K');
  assert.equal(parseOverride('event_cache_size=5K', '--x').value, '5K');
  assert.equal(parseOverride('a.b=x=y', '--x').value, 'x=y');
});

test('bad overrides are input errors naming the flag and the fix', () => {
  const cases: Array<[string, RegExp]> = [
    ['bcrypt_rounds', /--candidate-set "bcrypt_rounds": expected key=value/],
    ['=3', /expected key=value/],
    ['bcrypt rounds=3', /must be a dotted path/],
    ['bcrypt_rounds=', /the value is empty/],
    ['caches=[1, 2]', /must be a single scalar/],
    ['caches={a: 1}', /must be a single scalar/],
    ['listeners.0.port=80', /"listeners" cannot be overridden \(the bench binds the listeners/],
    ['trusted_key_servers=x', /no outbound traffic/],
    ['url_preview_enabled=true', /no outbound traffic/],
    ['database.args.host=10.0.0.1', /the bench provides the PostgreSQL database/],
  ];
  for (const [text, message] of cases) {
    assert.throws(
      () => parseOverride(text, '--candidate-set'),
      (e: unknown) => e instanceof InputError && message.test((e as Error).message),
      text,
    );
  }
});

test('overrides patch a copy of the config; a scalar cannot gain children', () => {
  const base = { bcrypt_rounds: 12, caches: { global_factor: 0.5 }, presence: { enabled: false } };
  const patched = applyOverrides(base, [
    parseOverride('bcrypt_rounds=14', '--x'),
    parseOverride('caches.global_factor=0.05', '--x'),
    parseOverride('rc_message.per_second=5', '--x'),
  ]);
  assert.deepEqual(patched, { bcrypt_rounds: 14, caches: { global_factor: 0.05 }, presence: { enabled: false }, rc_message: { per_second: 5 } });
  assert.equal(base.bcrypt_rounds, 12, 'the input is not mutated');
  assert.throws(() => applyOverrides(base, [parseOverride('bcrypt_rounds.x=1', '--x')]), /"bcrypt_rounds" is not a map/);
});

test('target.settings (maps and dotted keys) become overrides, with the same reserved keys', () => {
  const o = settingsToOverrides({ bcrypt_rounds: 10, caches: { global_factor: 1 }, 'rc_message.burst_count': 50 });
  assert.deepEqual(
    o.map((x) => [x.path.join('.'), x.value]),
    [
      ['bcrypt_rounds', 10],
      ['caches.global_factor', 1],
      ['rc_message.burst_count', 50],
    ],
  );
  assert.throws(() => settingsToOverrides({ report_stats: true }), /target\.settings\.report_stats: "report_stats" cannot be overridden/);
  assert.throws(() => settingsToOverrides({ a: [1] }), /lists are not supported/);
});
