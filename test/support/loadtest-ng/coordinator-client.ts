import { callApi, LoadTestNgError, type HttpOptions } from '../../../src/engine/loadtest-ng/http.ts';
import { coordinatorResponseSchema, resourceIdSchema, type CoordinatorStatus } from '../../../src/engine/loadtest-ng/schema.ts';
import type { CoordinatorConfig, LoadTestConfig } from '../../../src/engine/loadtest-ng/config.ts';

/**
 * Client for a load-test coordinator (`/coordinator/{id}/...` on the API server that
 * runs it). The coordinator drives the agents listed in its `ClusterConfig` itself.
 */
export class CoordinatorClient {
  readonly id: string;

  constructor(
    id: string,
    private readonly http: HttpOptions,
  ) {
    const parsed = resourceIdSchema.safeParse(id);
    if (!parsed.success) throw new LoadTestNgError(`coordinator id "${id}": ${parsed.error.issues[0]?.message}`, 'POST /coordinator/create');
    this.id = parsed.data;
  }

  /** `POST /coordinator/create?id=ID` with `{ CoordinatorConfig, LoadTestConfig }`. */
  async create(coordinator: CoordinatorConfig, loadTest: LoadTestConfig): Promise<CoordinatorStatus> {
    return this.request('POST', `coordinator/create?id=${this.id}`, { CoordinatorConfig: coordinator, LoadTestConfig: loadTest });
  }

  /** `POST /coordinator/{id}/run`: starts the feedback loop. */
  async run(): Promise<CoordinatorStatus> {
    return this.request('POST', `coordinator/${this.id}/run`);
  }

  /** `POST /coordinator/{id}/stop`. */
  async stop(): Promise<CoordinatorStatus> {
    return this.request('POST', `coordinator/${this.id}/stop`);
  }

  /** `GET /coordinator/{id}/status`. */
  async status(): Promise<CoordinatorStatus> {
    return this.request('GET', `coordinator/${this.id}/status`);
  }

  /** `DELETE /coordinator/{id}`: stops (if running) and forgets the coordinator. */
  async destroy(): Promise<CoordinatorStatus> {
    return this.request('DELETE', `coordinator/${this.id}`);
  }

  private async request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<CoordinatorStatus> {
    const { httpStatus, body: response } = await callApi(this.http, { method, path, body }, coordinatorResponseSchema);
    const route = `${method} /${path.split('?')[0]}`;
    if ((httpStatus !== 200 && httpStatus !== 201) || response.error) {
      const why = response.error ?? response.message ?? 'no error message';
      const hint = httpStatus === 404 ? ' (the coordinator does not exist: create it first, or the API restarted)' : '';
      throw new LoadTestNgError(`load-test coordinator ${this.id}: ${route} failed with HTTP ${httpStatus}: ${why}${hint}`, route, httpStatus, response.error);
    }
    if (!response.status) throw new LoadTestNgError(`load-test coordinator ${this.id}: ${route} answered without a status`, route, httpStatus);
    return response.status;
  }
}
