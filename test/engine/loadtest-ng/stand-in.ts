import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { agentCreateRefusal, coordinatorCreateRefusal } from '../../../src/engine/loadtest-ng/rules.ts';
import { DEFAULT_LOADTEST_NG_VERSION, type LoadTestNgVersion } from '../../../src/config/engine-versions.ts';

/**
 * A local stand-in for load-test-ng's API server (127.0.0.1, port 0). It keeps agents and
 * coordinators in memory, follows the routes and rules of `api/agent.go` and
 * `api/coordinator.go`, and answers with the recorded shapes in test/fixtures/loadtest-ng.
 * Create requests are validated with the rules of the release it stands in for
 * (src/engine/loadtest-ng/rules.ts), so it refuses what that release refuses.
 */

const FIXTURES = new URL('../../fixtures/loadtest-ng/', import.meta.url);
export function fixture(name: string): Record<string, unknown> {
  return JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as Record<string, unknown>;
}

interface AgentState {
  State: 'stopped' | 'running';
  NumUsers: number;
  NumUsersAdded: number;
  NumUsersRemoved: number;
  NumErrors: number;
  StartTime: string;
  maxUsers: number;
}

interface CoordinatorState {
  State: 'stopped' | 'running' | 'done';
  StartTime: string;
  StopTime: string;
  ActiveUsers: number;
  NumErrors: number;
  SupportedUsers: number;
}

export interface RecordedRequest {
  method: string;
  url: string;
  body: unknown;
}

const ZERO = '0001-01-01T00:00:00Z';
const ID_PATTERN = /^[a-z]+[0-9]*$/;

export class LoadTestNgStandIn {
  readonly requests: RecordedRequest[] = [];
  readonly agents = new Map<string, AgentState>();
  readonly coordinators = new Map<string, CoordinatorState>();
  /**
   * Set: NewControllerWrapper fails with this error (e.g. the sysadmin login of
   * createCustomEmoji on a database without that admin). api/agent.go
   * createLoadAgentHandler then writes its 400 answer but does not return: loadtest.New
   * still runs and a second answer ("load-test agent created") follows in the same body,
   * under the status already sent. The agent is stored all the same.
   */
  controllerError: string | undefined;
  /** Raw body overrides for the next request to a path, to exercise broken answers. */
  readonly rawOverride = new Map<string, { status: number; body: string }>();
  private server: Server | undefined;
  baseUrl = '';

  constructor(readonly version: LoadTestNgVersion = DEFAULT_LOADTEST_NG_VERSION) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    return this.baseUrl;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** Moves a running coordinator to `done`, as its feedback loop does at equilibrium. */
  finishCoordinator(id: string, supportedUsers: number): void {
    const c = this.coordinators.get(id);
    if (!c) throw new Error(`no coordinator ${id}`);
    Object.assign(c, { State: 'done', StopTime: '2025-09-30T17:11:42.88113Z', SupportedUsers: supportedUsers, ActiveUsers: supportedUsers });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://stand-in');
    this.requests.push({ method: req.method ?? '', url: `${url.pathname}${url.search}`, body: text ? safeJson(text) : undefined });

    const override = this.rawOverride.get(url.pathname);
    if (override) {
      this.rawOverride.delete(url.pathname);
      res.writeHead(override.status, { 'Content-Type': 'application/json' }).end(override.body);
      return;
    }
    const send = (status: number, body: unknown) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
    const parts = url.pathname.split('/').filter(Boolean);
    const [kind, id, action] = parts;
    const sendRaw = (status: number, body: string) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
    if (kind === 'loadagent') return this.agentRoute(req.method ?? '', id, action, url, text, send, sendRaw);
    if (kind === 'coordinator') return this.coordinatorRoute(req.method ?? '', id, action, url, text, send);
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('404 page not found\n');
  }

  private agentRoute(
    method: string,
    id: string | undefined,
    action: string | undefined,
    url: URL,
    text: string,
    send: (s: number, b: unknown) => void,
    sendRaw: (s: number, body: string) => void,
  ): void {
    if (method === 'POST' && id === 'create') {
      const newId = url.searchParams.get('id') ?? '';
      // gorilla/mux: the route only matches ids of the pattern, others fall through to 404/405.
      if (!ID_PATTERN.test(newId)) return send(405, { error: 'method not allowed' });
      const body = safeJson(text) as { LoadTestConfig?: { UsersConfiguration?: { MaxActiveUsers?: number } } } | undefined;
      const refusal = agentCreateRefusal(body, this.version, newId);
      if (refusal) {
        const { status, ...answer } = refusal;
        return send(status, answer);
      }
      const max = body?.LoadTestConfig?.UsersConfiguration?.MaxActiveUsers ?? 0;
      if (this.agents.has(newId)) return send(409, { error: `load-test agent with id ${newId} already exists` });
      if (this.coordinators.has(newId)) return send(409, { error: `resource with id ${newId} already exists` });
      const agent: AgentState = { State: 'stopped', NumUsers: 0, NumUsersAdded: 0, NumUsersRemoved: 0, NumErrors: 0, StartTime: ZERO, maxUsers: max };
      this.agents.set(newId, agent);
      if (this.controllerError) {
        // Two json.Encoder answers, one WriteHeader that counts (net/http ignores the second).
        const first = { id: newId, message: 'load-test agent creation failed', error: `could not create agent: ${this.controllerError}` };
        const second = { ...fixture('agent-create-201.json'), id: newId, status: agentStatus(agent) };
        return void sendRaw(400, `${JSON.stringify(first)}\n${JSON.stringify(second)}\n`);
      }
      return send(201, { ...fixture('agent-create-201.json'), id: newId, status: agentStatus(agent) });
    }
    const agent = id ? this.agents.get(id) : undefined;
    if (!id || !agent) return send(404, { error: `load-test agent with id ${id} not found` });
    if (method === 'POST' && action === 'run') {
      if (agent.State === 'running') return send(200, fixture('agent-run-error-200.json'));
      agent.State = 'running';
      if (agent.StartTime === ZERO) agent.StartTime = new Date().toISOString();
      return send(200, { message: 'load-test agent started', status: agentStatus(agent) });
    }
    if (method === 'POST' && action === 'stop') {
      if (agent.State !== 'running') return send(200, { error: 'LoadTester is not running' });
      agent.State = 'stopped';
      agent.NumUsersRemoved += agent.NumUsers;
      agent.NumUsers = 0;
      return send(200, { message: 'load-test agent stopped', status: agentStatus(agent) });
    }
    if (method === 'DELETE' && !action) {
      this.agents.delete(id);
      agent.State = 'stopped';
      return send(200, { message: 'load-test agent destroyed', status: agentStatus(agent) });
    }
    if (method === 'GET' && (!action || action === 'status')) return send(200, { status: agentStatus(agent) });
    if (method === 'POST' && (action === 'addusers' || action === 'removeusers')) {
      const raw = url.searchParams.get('amount') ?? '';
      const amount = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
      if (!(amount > 0) || amount > 32767) return send(400, { error: `invalid amount: ${raw}` });
      if (agent.State !== 'running')
        return send(200, { message: `0 users ${action === 'addusers' ? 'added' : 'removed'}`, status: agentStatus(agent), error: 'LoadTester is not running' });
      if (action === 'addusers') {
        const room = agent.maxUsers - agent.NumUsers;
        const n = Math.min(room, amount);
        agent.NumUsers += n;
        agent.NumUsersAdded += n;
        return send(200, { message: `${n} users added`, status: agentStatus(agent), ...(n < amount ? { error: 'Max active users limit reached' } : {}) });
      }
      const n = Math.min(agent.NumUsers, amount);
      agent.NumUsers -= n;
      agent.NumUsersRemoved += n;
      return send(200, { message: `${n} users removed`, status: agentStatus(agent), ...(n < amount ? { error: 'No active users left' } : {}) });
    }
    send(405, { error: 'method not allowed' });
  }

  private coordinatorRoute(
    method: string,
    id: string | undefined,
    action: string | undefined,
    url: URL,
    text: string,
    send: (s: number, b: unknown) => void,
  ): void {
    if (method === 'POST' && id === 'create') {
      const newId = url.searchParams.get('id') ?? '';
      if (!ID_PATTERN.test(newId)) return send(405, { error: 'method not allowed' });
      const refusal = coordinatorCreateRefusal(safeJson(text), this.version, newId);
      if (refusal) {
        const { status, ...answer } = refusal;
        return send(status, answer);
      }
      if (this.coordinators.has(newId)) return send(409, { error: `load-test coordinator with id ${newId} already exists` });
      if (this.agents.has(newId)) return send(409, { error: `resource with id ${newId} already exists` });
      const c: CoordinatorState = { State: 'stopped', StartTime: ZERO, StopTime: ZERO, ActiveUsers: 0, NumErrors: 0, SupportedUsers: 0 };
      this.coordinators.set(newId, c);
      return send(201, { id: newId, message: 'load-test coordinator created', status: { ...c } });
    }
    const c = id ? this.coordinators.get(id) : undefined;
    if (!id || !c) return send(404, { error: `load-test coordinator with id ${id} not found` });
    if (method === 'POST' && action === 'run') {
      if (c.State === 'done') return send(400, fixture('coordinator-run-failed-400.json'));
      if (c.State === 'running') return send(400, { message: 'running coordinator failed', error: 'could not run coordinator: coordinator is running' });
      c.State = 'running';
      c.StartTime = '2025-09-30T14:05:00.120394Z';
      return send(200, { message: 'load-test coordinator started', status: { ...c } });
    }
    if (method === 'POST' && action === 'stop') {
      if (c.State !== 'running') return send(400, { message: 'stopping coordinator failed', error: 'could not stop coordinator: coordinator is not running' });
      c.State = 'stopped';
      c.StopTime = '2025-09-30T18:05:00.5Z';
      return send(200, { message: 'load-test coordinator stopped', status: { ...c } });
    }
    if (method === 'DELETE' && !action) {
      this.coordinators.delete(id);
      if (c.State === 'running') c.State = 'stopped';
      return send(200, { message: 'load-test coordinator destroyed', status: { ...c } });
    }
    if (method === 'GET' && (!action || action === 'status')) return send(200, { status: { ...c, ActiveBrowserUsers: 0, NumBrowserErrors: 0 } });
    send(405, { error: 'method not allowed' });
  }
}

function agentStatus(a: AgentState) {
  return {
    State: a.State,
    NumUsers: a.NumUsers,
    NumUsersAdded: a.NumUsersAdded,
    NumUsersRemoved: a.NumUsersRemoved,
    NumErrors: a.NumErrors,
    StartTime: a.StartTime,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The account a load-test-ng agent logs its user number `id` in as, given the lines of
 * its users file: loadtest/loadtest.go addUser numbers new users activeUsers + 1, and
 * api/agent.go NewControllerWrapper's factory takes creds[id] only while id < len(creds),
 * else a generated <agent id>-<id>@example.com (signed up anew); getUserCredentials reads a
 * line as "email password" split on one space.
 */
export function loadTestNgAccount(lines: readonly string[], id: number, agentId: string): string {
  const creds = lines.filter((l) => l !== '').map((l) => l.split(' ')[0] as string);
  return id < creds.length ? (creds[id] as string) : `${agentId}-${id}@example.com`;
}
