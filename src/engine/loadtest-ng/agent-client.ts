import { callApi, LoadTestNgError, type HttpOptions } from './http.ts';
import { agentResponseSchema, resourceIdSchema, type AgentResponse, type AgentStatus } from './schema.ts';
import type { LoadTestConfig, SimulControllerConfig } from './config.ts';

/** Result of `addUsers`/`removeUsers`: the agent stops at the first failure and says so. */
export interface UsersChange {
  requested: number;
  /** How many users the agent actually added or removed (from its "N users added" message). */
  changed: number;
  status: AgentStatus;
  /** Set when the agent stopped early, e.g. "max active users limit reached". */
  error?: string;
}

/**
 * Client for one load-test agent (`/loadagent/{id}/...` on the agent's API server,
 * port 4000 by default). Mirrors load-test-ng's own `api/client/agent` package.
 */
export class AgentClient {
  readonly id: string;

  constructor(
    id: string,
    private readonly http: HttpOptions,
  ) {
    const parsed = resourceIdSchema.safeParse(id);
    if (!parsed.success) throw new LoadTestNgError(`agent id "${id}": ${parsed.error.issues[0]?.message}`, 'POST /loadagent/create');
    this.id = parsed.data;
  }

  /** `POST /loadagent/create?id=ID` with the agent config and the simulative controller config. */
  async create(loadTest: LoadTestConfig, simulController: SimulControllerConfig): Promise<AgentStatus> {
    const body = { LoadTestConfig: loadTest, SimulControllerConfig: simulController };
    return this.expectStatus(await this.request('POST', `loadagent/create?id=${this.id}`, body));
  }

  /** `POST /loadagent/{id}/run`: starts the agent (with `InitialActiveUsers`). */
  async run(): Promise<AgentStatus> {
    return this.expectStatus(await this.request('POST', `loadagent/${this.id}/run`));
  }

  /** `POST /loadagent/{id}/stop`. */
  async stop(): Promise<AgentStatus> {
    return this.expectStatus(await this.request('POST', `loadagent/${this.id}/stop`));
  }

  /** `GET /loadagent/{id}/status`. */
  async status(): Promise<AgentStatus> {
    return this.expectStatus(await this.request('GET', `loadagent/${this.id}/status`));
  }

  /** `DELETE /loadagent/{id}`: stops (if running) and forgets the agent. */
  async destroy(): Promise<AgentStatus> {
    return this.expectStatus(await this.request('DELETE', `loadagent/${this.id}`));
  }

  /** `POST /loadagent/{id}/addusers?amount=N`. */
  async addUsers(amount: number): Promise<UsersChange> {
    return this.changeUsers('addusers', amount);
  }

  /** `POST /loadagent/{id}/removeusers?amount=N`. */
  async removeUsers(amount: number): Promise<UsersChange> {
    return this.changeUsers('removeusers', amount);
  }

  private async changeUsers(action: 'addusers' | 'removeusers', amount: number): Promise<UsersChange> {
    // The agent parses amount as a 16-bit integer and rejects <= 0.
    if (!Number.isInteger(amount) || amount <= 0 || amount > 32767) {
      throw new LoadTestNgError(`${action}: amount must be an integer from 1 to 32767, got ${amount}`, `POST /loadagent/{id}/${action}`);
    }
    const route = `loadagent/${this.id}/${action}?amount=${amount}`;
    // A partial change comes back as 200 with both `status` and `error`: report it, don't throw.
    const { httpStatus, body } = await callApi(this.http, { method: 'POST', path: route }, agentResponseSchema);
    if (httpStatus !== 200 || !body.status) throw this.failure('POST', route, httpStatus, body);
    const match = /^(\d+) users (added|removed)/.exec(body.message ?? '');
    const changed = match ? Number(match[1]) : body.error ? 0 : amount;
    return { requested: amount, changed, status: body.status, ...(body.error ? { error: body.error } : {}) };
  }

  private async request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown) {
    const { httpStatus, body: response } = await callApi(this.http, { method, path, body }, agentResponseSchema);
    if ((httpStatus !== 200 && httpStatus !== 201) || response.error) throw this.failure(method, path, httpStatus, response);
    return { path, method, response };
  }

  private expectStatus({ method, path, response }: { method: string; path: string; response: AgentResponse }): AgentStatus {
    if (!response.status) {
      throw new LoadTestNgError(`load-test agent ${this.id}: ${method} /${path.split('?')[0]} answered without a status`, `${method} /${path}`);
    }
    return response.status;
  }

  private failure(method: string, path: string, httpStatus: number, body: AgentResponse): LoadTestNgError {
    const route = `${method} /${path.split('?')[0]}`;
    const why = body.error ?? body.message ?? 'no error message';
    const hint = httpStatus === 404 ? ' (the agent does not exist: create it first, or the API restarted)' : '';
    return new LoadTestNgError(`load-test agent ${this.id}: ${route} failed with HTTP ${httpStatus}: ${why}${hint}`, route, httpStatus, body.error);
  }
}
