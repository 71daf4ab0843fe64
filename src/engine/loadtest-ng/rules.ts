/**
 * load-test-ng's create-time validation, per supported release, transcribed from its source
 * (github.com/mattermost/mattermost-load-test-ng):
 *
 * - the `validate` struct tags of loadtest/config.go, logger/logger.go,
 *   loadtest/control/simulcontroller/config.go, coordinator/config.go,
 *   coordinator/cluster/config.go, coordinator/performance/config.go and
 *   coordinator/performance/prometheus/config.go, kept here as the tag strings themselves;
 * - the interpreter of those tags, defaults/validate.go `Validate` (identical from v1.29.0 to
 *   v1.33.0-rc2): fields in declaration order, the first failure wins, nested structs and
 *   slice elements recursed into, and a struct's `IsValid` called first only when Go can find
 *   it on the value passed (a pointer-receiver `IsValid` is not found on a struct value);
 * - the handlers that call it, api/agent.go `createLoadAgentHandler` and api/coordinator.go
 *   `createCoordinatorHandler`, with their status codes and message prefixes.
 *
 * Version differences (git diff between the tags, files above):
 * - v1.30.0 adds `BrowserConfiguration.SimulationTimeoutMs` (`range:[0,]`); v1.31.0 drops
 *   `BrowserConfiguration` again;
 * - v1.29.0–v1.32.0 carry `BrowserLogSettings` whose levels are `oneof` lower-case names, so
 *   a config without it (empty `ConsoleLevel`) is refused with 400; v1.33.0-rc2 removes it
 *   (Go's JSON decoder then ignores the key).
 *
 * The loadtest-ng stand-in (test/engine/loadtest-ng/stand-in.ts) answers with these, and
 * buildLoadTestNgConfigs checks its own output with them before any agent sees it.
 */

import { SUPPORTED_LOADTEST_NG_VERSIONS, type LoadTestNgVersion } from '../../config/engine-versions.ts';

type Scalar = 'string' | 'int' | 'float' | 'bool';

interface Field {
  name: string;
  /** A scalar's Go kind, or a nested struct, or a slice of structs. */
  type: Scalar | StructDef | { sliceOf: StructDef } | { sliceOf: 'string' };
  validate?: string;
  /** Present only in these releases (default: all supported). */
  in?: readonly LoadTestNgVersion[];
}

interface StructDef {
  name: string;
  fields: Field[];
  /** The struct's IsValid and whether Go finds it on a value (value receiver) or only on a pointer. */
  isValid?: { receiver: 'value' | 'pointer'; check: (v: GoValue) => string | undefined };
}

type GoValue = Record<string, unknown>;

const upTo = (last: LoadTestNgVersion): LoadTestNgVersion[] => SUPPORTED_LOADTEST_NG_VERSIONS.slice(0, SUPPORTED_LOADTEST_NG_VERSIONS.indexOf(last) + 1);

// logger/logger.go `Settings` (unchanged v1.29.0–v1.33.0-rc2).
const loggerSettings: StructDef = {
  name: 'logger.Settings',
  fields: [
    { name: 'EnableConsole', type: 'bool' },
    { name: 'ConsoleJson', type: 'bool' },
    { name: 'ConsoleLevel', type: 'string', validate: 'oneof:{TRACE, DEBUG, INFO, WARN, ERROR}' },
    { name: 'EnableFile', type: 'bool' },
    { name: 'FileJson', type: 'bool' },
    { name: 'FileLevel', type: 'string', validate: 'oneof:{TRACE, DEBUG, INFO, WARN, ERROR}' },
    { name: 'FileLocation', type: 'string' },
    { name: 'EnableColor', type: 'bool' },
  ],
};

// loadtest/config.go.
const ratesDistribution: StructDef = {
  name: 'loadtest.RatesDistribution',
  fields: [
    { name: 'Rate', type: 'float', validate: 'range:[0,)' },
    { name: 'Percentage', type: 'float', validate: 'range:[0,1]' },
  ],
};

const loadTestConfigDef: StructDef = {
  name: 'loadtest.Config',
  // (c *Config) IsValid: pointer receiver, so only loadtest.New (which passes &config) runs it.
  isValid: {
    receiver: 'pointer',
    check: (c) => {
      const ucc = obj(c.UserControllerConfiguration);
      const rates = Array.isArray(ucc.RatesDistribution) ? (ucc.RatesDistribution as GoValue[]) : [];
      const sum = rates.reduce((s, r) => s + num(obj(r).Percentage), 0);
      if (rates.length > 0 && sum !== 1) return 'Percentages in RatesDistribution should sum to 1';
      const ic = obj(c.InstanceConfiguration);
      const channels = num(ic.PercentPublicChannels) + num(ic.PercentPrivateChannels) + num(ic.PercentDirectChannels) + num(ic.PercentGroupChannels);
      if (Math.round(channels * 100) / 100 !== 1) return 'sum of percentages for channels should be equal to 1';
      return undefined;
    },
  },
  fields: [
    {
      name: 'ConnectionConfiguration',
      type: {
        name: 'loadtest.ConnectionConfiguration',
        fields: [
          { name: 'ServerURL', type: 'string', validate: 'url' },
          { name: 'WebSocketURL', type: 'string', validate: 'url' },
          { name: 'AdminEmail', type: 'string', validate: 'email' },
          { name: 'AdminPassword', type: 'string', validate: 'notempty' },
        ],
      },
    },
    {
      name: 'UserControllerConfiguration',
      type: {
        name: 'loadtest.UserControllerConfiguration',
        fields: [
          { name: 'Type', type: 'string', validate: 'oneof:{simple,simulative,noop,cluster,generative,browser}' },
          { name: 'RatesDistribution', type: { sliceOf: ratesDistribution } },
          { name: 'ServerVersion', type: 'string' },
        ],
      },
    },
    {
      name: 'InstanceConfiguration',
      type: {
        name: 'loadtest.InstanceConfiguration',
        fields: [
          { name: 'NumTeams', type: 'int', validate: 'range:[0,]' },
          { name: 'NumChannels', type: 'int', validate: 'range:[0,]' },
          { name: 'NumPosts', type: 'int', validate: 'range:[0,]' },
          { name: 'NumReactions', type: 'int', validate: 'range:[0,]' },
          { name: 'NumAdmins', type: 'int', validate: 'range:[0,]' },
          { name: 'PercentReplies', type: 'float', validate: 'range:[0,1]' },
          { name: 'PercentRepliesInLongThreads', type: 'float', validate: 'range:[0,1]' },
          { name: 'PercentUrgentPosts', type: 'float', validate: 'range:[0,1]' },
          { name: 'PercentPublicChannels', type: 'float', validate: 'range:[0,1]' },
          { name: 'PercentPrivateChannels', type: 'float', validate: 'range:[0,1]' },
          { name: 'PercentDirectChannels', type: 'float', validate: 'range:[0,1]' },
          { name: 'PercentGroupChannels', type: 'float', validate: 'range:[0,1]' },
        ],
      },
    },
    {
      name: 'UsersConfiguration',
      type: {
        name: 'loadtest.UsersConfiguration',
        fields: [
          { name: 'UsersFilePath', type: 'string' },
          { name: 'InitialActiveUsers', type: 'int', validate: 'range:[0,$MaxActiveUsers]' },
          { name: 'MaxActiveUsers', type: 'int', validate: 'range:(0,]' },
          { name: 'MaxActiveBrowserUsers', type: 'int', validate: 'range:[0,]' },
          { name: 'AvgSessionsPerUser', type: 'int', validate: 'range:[1,]' },
          { name: 'PercentOfUsersAreAdmin', type: 'float', validate: 'range:[0,1]' },
        ],
      },
    },
    {
      name: 'BrowserConfiguration',
      in: upTo('v1.30.0'),
      type: {
        name: 'loadtest.BrowserConfiguration',
        fields: [
          { name: 'Headless', type: 'bool' },
          { name: 'SimulationTimeoutMs', type: 'int', validate: 'range:[0,]', in: ['v1.30.0'] },
        ],
      },
    },
    { name: 'LogSettings', type: loggerSettings },
    {
      name: 'BrowserLogSettings',
      in: upTo('v1.32.0'),
      type: {
        name: 'loadtest.BrowserLogSettings',
        fields: [
          { name: 'EnableConsole', type: 'bool' },
          { name: 'ConsoleLevel', type: 'string', validate: 'oneof:{trace, debug, info, warn, error, fatal}' },
          { name: 'EnableFile', type: 'bool' },
          { name: 'FileLevel', type: 'string', validate: 'oneof:{trace, debug, info, warn, error, fatal}' },
          { name: 'FileLocation', type: 'string' },
        ],
      },
    },
  ],
};

// loadtest/control/simulcontroller/config.go (EnabledPlugins from v1.32.0, no tag).
const simulControllerConfigDef: StructDef = {
  name: 'simulcontroller.Config',
  fields: [
    { name: 'MinIdleTimeMs', type: 'int', validate: 'range:[0,]' },
    { name: 'AvgIdleTimeMs', type: 'int', validate: 'range:($MinIdleTimeMs,]' },
    { name: 'PercentUrgentPosts', type: 'float', validate: 'range:[0,1]' },
    { name: 'PercentReplies', type: 'float', validate: 'range:[0,1]' },
    { name: 'EnabledPlugins', type: { sliceOf: 'string' }, in: ['v1.32.0', 'v1.33.0-rc2'] },
  ],
};

const loadAgentConfig: StructDef = {
  name: 'cluster.LoadAgentConfig',
  fields: [
    { name: 'Id', type: 'string', validate: 'notempty' },
    { name: 'ApiURL', type: 'string', validate: 'url' },
  ],
};

const prometheusQuery: StructDef = {
  name: 'prometheus.Query',
  fields: [
    { name: 'Description', type: 'string', validate: 'notempty' },
    { name: 'Legend', type: 'string' },
    { name: 'Query', type: 'string', validate: 'notempty' },
    { name: 'Threshold', type: 'float', validate: 'range:[0,]' },
    { name: 'MinIntervalSec', type: 'int', validate: 'range:[0,]' },
    { name: 'Alert', type: 'bool' },
  ],
};

const coordinatorConfigDef: StructDef = {
  name: 'coordinator.Config',
  // func (c Config) IsValid: a value receiver, found through the pointer coordinator.New passes.
  isValid: {
    receiver: 'value',
    check: (c) => {
      const interval = num(obj(c.MonitorConfig).UpdateIntervalMs);
      const rest = num(c.RestTimeSec);
      if (rest * 1000 < interval) return `RestTimeSec (${rest}) should greater than MonitorConfig.UpdateIntervalMs/1000 (${Math.trunc(interval / 1000)})`;
      return undefined;
    },
  },
  fields: [
    {
      name: 'ClusterConfig',
      type: {
        name: 'cluster.LoadAgentClusterConfig',
        fields: [
          { name: 'Agents', type: { sliceOf: loadAgentConfig } },
          { name: 'MaxActiveUsers', type: 'int', validate: 'range:(0,]' },
          { name: 'BrowserAgents', type: { sliceOf: loadAgentConfig } },
          { name: 'MaxActiveBrowserUsers', type: 'int', validate: 'range:[0,]' },
        ],
      },
    },
    {
      name: 'MonitorConfig',
      type: {
        name: 'performance.MonitorConfig',
        // func (c MonitorConfig) IsValid: value receiver, so found on the nested value.
        isValid: { receiver: 'value', check: (m) => (str(m.PrometheusURL) === '' ? 'PrometheusURL cannot be empty' : undefined) },
        fields: [
          { name: 'PrometheusURL', type: 'string', validate: 'url' },
          // No tag: any value is accepted, and ignored (deprecated, fixed at 1000 ms).
          { name: 'UpdateIntervalMs', type: 'int' },
          { name: 'Queries', type: { sliceOf: prometheusQuery } },
        ],
      },
    },
    { name: 'NumUsersInc', type: 'int', validate: 'range:(0,]' },
    { name: 'NumUsersDec', type: 'int', validate: 'range:(0,]' },
    { name: 'RestTimeSec', type: 'int', validate: 'range:(0,]' },
    { name: 'LogSettings', type: loggerSettings },
  ],
};

/** A JSON body as Go's json.Decoder would fill the struct: type mismatches are decode errors. */
function decodeError(value: unknown, def: StructDef, version: LoadTestNgVersion, path = `${def.name.split('.')[1]}.`): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) return `json: cannot unmarshal ${jsonKind(value)} into Go value of type ${def.name}`;
  for (const field of fieldsOf(def, version)) {
    const v = (value as GoValue)[field.name];
    if (v === undefined || v === null) continue;
    const where = `${path}${field.name}`;
    const t = field.type;
    if (typeof t === 'string') {
      const ok =
        t === 'string' ? typeof v === 'string' : t === 'bool' ? typeof v === 'boolean' : typeof v === 'number' && (t === 'float' || Number.isInteger(v));
      if (!ok) return `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${where} of type ${goType(t)}`;
    } else if ('sliceOf' in t) {
      if (!Array.isArray(v))
        return `json: cannot unmarshal ${jsonKind(v)} into Go struct field ${where} of type []${t.sliceOf === 'string' ? 'string' : t.sliceOf.name}`;
      if (t.sliceOf !== 'string') {
        for (const item of v) {
          const e = decodeError(item, t.sliceOf, version, `${where}.`);
          if (e) return e;
        }
      }
    } else {
      const e = decodeError(v, t, version, `${where}.`);
      if (e) return e;
    }
  }
  return undefined;
}

/**
 * defaults.Validate(value) for one release. `asPointer`: the caller passed a pointer
 * (`&cfg`), so a pointer-receiver IsValid of the top-level struct runs too.
 */
function goValidate(value: unknown, def: StructDef, version: LoadTestNgVersion, asPointer: boolean): string | undefined {
  const v = obj(value);
  if (def.isValid && (def.isValid.receiver === 'value' || asPointer)) {
    const e = def.isValid.check(v);
    if (e) return e;
  }
  for (const field of fieldsOf(def, version)) {
    const t = field.type;
    const fv = v[field.name];
    if (typeof t === 'object' && 'fields' in t) {
      // Nested structs are passed as values: only value-receiver IsValid methods run.
      const e = goValidate(fv, t, version, false);
      if (e) return e;
    } else if (typeof t === 'object' && 'sliceOf' in t) {
      const items = Array.isArray(fv) ? fv : [];
      if (field.validate) {
        const e = validateTag(field.validate, field.name, v, items, 'slice');
        if (e) return e;
      }
      if (t.sliceOf !== 'string') {
        for (const item of items) {
          const e = goValidate(item, t.sliceOf, version, false);
          if (e) return e;
        }
      }
    } else if (field.validate) {
      const zero = t === 'string' ? '' : t === 'bool' ? false : 0;
      const e = validateTag(field.validate, field.name, v, fv ?? zero, t);
      if (e) return e;
    }
  }
  return undefined;
}

function fieldsOf(def: StructDef, version: LoadTestNgVersion): Field[] {
  return def.fields.filter((f) => !f.in || f.in.includes(version));
}

// defaults/validate.go: the regular expressions and messages of `validate`.
const EMAIL = /^[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/;
const RANGE = /range:(\[|\()(\S*),(\S*)(\]|\))/;
const ONEOF = /oneof:(\{)(.*)(\})/;

function validateTag(tag: string, fieldName: string, parent: GoValue, value: unknown, kind: Scalar | 'slice'): string | undefined {
  if (tag === 'url') {
    // url.ParseRequestURI: an absolute URI or an absolute path.
    const s = String(value);
    if (s === '') return 'parse "": empty url';
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s) && !s.startsWith('/')) return `parse "${s}": invalid URI for request`;
    return undefined;
  }
  if (tag === 'email') return EMAIL.test(String(value)) ? undefined : `${String(value)} is not a valid e-mail address`;
  if (tag === 'notempty') {
    if (kind === 'slice') return (value as unknown[]).length === 0 ? `${fieldName} is empty` : undefined;
    return kind === 'string' && value === '' ? `${fieldName} is empty` : undefined;
  }
  const range = RANGE.exec(tag);
  if (tag.startsWith('range') && range) {
    const [, open, minRef = '', maxRef = '', close] = range;
    const min = fromField(parent, minRef);
    const max = fromField(parent, maxRef);
    const val = Number(value);
    let problem: string | undefined;
    if (min !== '') {
      const m = Number(min);
      if (open === '(' ? m >= val : m > val) problem = `value ${goFloat(val)} is lesser ${open === '(' ? 'or equal ' : ''}than ${goFloat(m)}`;
    }
    if (!problem && max !== '') {
      const m = Number(max);
      if (close === ')' ? m <= val : m < val) problem = `value ${goFloat(val)} is greater ${close === ')' ? 'or equal ' : ''}than ${goFloat(m)}`;
    }
    return problem ? `${fieldName} is not in the range of ${tag}: ${problem}` : undefined;
  }
  const oneof = ONEOF.exec(tag);
  if (tag.startsWith('oneof') && oneof) {
    const valids = (oneof[2] ?? '').split(',').map((s) => s.trim());
    if (valids.includes(String(value))) return undefined;
    return `${fieldName} is not valid: value is not one of valid values: [${valids.map((s) => `"${s}"`).join(' ')}]`;
  }
  return `validation type "${tag}" unknown`;
}

/** `$Field` in a range names a sibling field (validateFromField); ints print as %d. */
function fromField(parent: GoValue, ref: string): string {
  if (!ref.startsWith('$')) return ref;
  return String(Math.trunc(num(parent[ref.slice(1)])));
}

/** Go's %v of a float64: shortest digits, exponent form from 1e+06 and below 1e-04. */
export function goFloat(v: number): string {
  if (v === 0) return '0';
  const exp = Math.floor(Math.log10(Math.abs(v)));
  if (exp < -4 || exp >= 6) {
    const [mantissa, e] = v.toExponential().split('e') as [string, string];
    const n = Number(e);
    return `${mantissa}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  }
  return String(v);
}

function obj(v: unknown): GoValue {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as GoValue) : {};
}
function num(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}
function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}
function goType(t: Scalar): string {
  return t === 'int' ? 'int' : t === 'float' ? 'float64' : t;
}

export interface CreateRefusal {
  status: 400;
  id?: string;
  message?: string;
  error: string;
}

/** POST /loadagent/create: what api/agent.go answers for a body, or undefined when it passes validation. */
export function agentCreateRefusal(body: unknown, version: LoadTestNgVersion, id: string): CreateRefusal | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { status: 400, error: 'could not read request: invalid character' };
  const data = body as GoValue;
  const decode = decodeError(data.LoadTestConfig, loadTestConfigDef, version) ?? decodeError(data.SimulControllerConfig, simulControllerConfigDef, version);
  if (decode) return { status: 400, error: `could not read request: ${decode}` };
  // defaults.Validate(ltConfig): a value, so Config.IsValid does not run here.
  const lt = goValidate(data.LoadTestConfig, loadTestConfigDef, version, false);
  if (lt) return { status: 400, error: `could not validate config: ${lt}` };
  const uc = obj(data.LoadTestConfig).UserControllerConfiguration;
  // The simulative controller's config, when sent (a pointer); absent, the agent reads its file.
  if (obj(uc).Type === 'simulative' && data.SimulControllerConfig) {
    const sc = goValidate(data.SimulControllerConfig, simulControllerConfigDef, version, true);
    if (sc) return { status: 400, error: `could not validate controller configuration: ${sc}` };
  }
  // loadtest.New(&ltConfig, ...): now Config.IsValid runs.
  const full = goValidate(data.LoadTestConfig, loadTestConfigDef, version, true);
  if (full) return { status: 400, id, message: 'load-test agent creation failed', error: `could not create agent: could not validate configuration: ${full}` };
  return undefined;
}

/** POST /coordinator/create: what api/coordinator.go answers, or undefined when it passes. */
export function coordinatorCreateRefusal(body: unknown, version: LoadTestNgVersion, id: string): CreateRefusal | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return { status: 400, error: 'could not read request: invalid character' };
  const data = body as GoValue;
  const decode = decodeError(data.CoordinatorConfig, coordinatorConfigDef, version) ?? decodeError(data.LoadTestConfig, loadTestConfigDef, version);
  if (decode) return { status: 400, error: `could not read request: ${decode}` };
  const lt = goValidate(data.LoadTestConfig, loadTestConfigDef, version, false);
  if (lt) return { status: 400, error: `could not validate load-test config: ${lt}` };
  const failed = (error: string): CreateRefusal => ({
    status: 400,
    id,
    message: 'load-test coordinator creation failed',
    error: `could not create coordinator: ${error}`,
  });
  const c = goValidate(data.CoordinatorConfig, coordinatorConfigDef, version, true);
  if (c) return failed(`could not validate configuration: ${c}`);
  // cluster.(*LoadAgentClusterConfig).IsValid(ltConfig).
  const cluster = obj(obj(data.CoordinatorConfig).ClusterConfig);
  const agents = Array.isArray(cluster.Agents) ? cluster.Agents.length : 0;
  const perAgent = num(obj(obj(data.LoadTestConfig).UsersConfiguration).MaxActiveUsers);
  if (agents > 0 && perAgent * agents < num(cluster.MaxActiveUsers)) {
    return failed(
      'could not validate ltConfig against clusterConfig: coordinator: total MaxActiveUsers in loadTest should not be less than clusterConfig.MaxActiveUsers',
    );
  }
  return undefined;
}
