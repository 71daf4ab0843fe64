import { createHmac } from 'node:crypto';
import { z } from 'zod';

/**
 * The few Matrix client/admin API calls the dataset seeder makes, over fetch with
 * zod-parsed responses. Every call has a time-out; `fetchImpl` is swappable for tests.
 */
export type FetchLike = (url: string, init?: RequestInit) => Promise<Response>;

const nonceSchema = z.object({ nonce: z.string().min(1) });
const registerSchema = z.object({ user_id: z.string().min(1), access_token: z.string().min(1) });
const roomIdSchema = z.object({ room_id: z.string().startsWith('!') });
const eventIdSchema = z.object({ event_id: z.string().startsWith('$') });
const matrixErrorSchema = z.object({ errcode: z.string(), error: z.string().optional() });

class MatrixError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'MatrixError';
  }
}

/** HMAC-SHA1 the shared-secret registration endpoint expects. */
export function registrationMac(secret: string, nonce: string, username: string, password: string, admin: boolean): string {
  return createHmac('sha1', secret)
    .update(`${nonce}\0${username}\0${password}\0${admin ? 'admin' : 'notadmin'}`)
    .digest('hex');
}

export class MatrixClient {
  private txn = 0;
  constructor(
    private readonly baseUrl: string,
    private readonly fetchImpl: FetchLike = fetch,
    private readonly timeoutMs = 60_000,
  ) {}

  private async call<S extends z.ZodType>(method: string, path: string, schema: S, body?: unknown, token?: string): Promise<z.output<S>> {
    const response = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new MatrixError(response.status, undefined, `${method} ${path}: HTTP ${response.status}, not JSON: ${text.slice(0, 200)}`);
    }
    if (!response.ok) {
      const err = matrixErrorSchema.safeParse(json);
      const detail = err.success ? `${err.data.errcode}: ${err.data.error ?? ''}` : text.slice(0, 200);
      throw new MatrixError(response.status, err.success ? err.data.errcode : undefined, `${method} ${path}: HTTP ${response.status} ${detail}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new MatrixError(response.status, undefined, `${method} ${path}: unexpected response: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  }

  /** Registers a user through the shared-secret admin API; returns its id and an access token. */
  async registerWithSharedSecret(secret: string, username: string, password: string, admin = false): Promise<{ userId: string; accessToken: string }> {
    const { nonce } = await this.call('GET', '/_synapse/admin/v1/register', nonceSchema);
    const mac = registrationMac(secret, nonce, username, password, admin);
    const r = await this.call('POST', '/_synapse/admin/v1/register', registerSchema, { nonce, username, password, admin, mac });
    return { userId: r.user_id, accessToken: r.access_token };
  }

  async createRoom(token: string, body: Record<string, unknown>): Promise<string> {
    return (await this.call('POST', '/_matrix/client/v3/createRoom', roomIdSchema, body, token)).room_id;
  }

  async join(token: string, roomId: string): Promise<void> {
    await this.call('POST', `/_matrix/client/v3/join/${encodeURIComponent(roomId)}`, roomIdSchema, {}, token);
  }

  async sendEvent(token: string, roomId: string, type: string, content: Record<string, unknown>): Promise<string> {
    const txnId = `lg${Date.now()}.${this.txn++}`;
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/send/${encodeURIComponent(type)}/${txnId}`;
    return (await this.call('PUT', path, eventIdSchema, content, token)).event_id;
  }

  async setAccountData(token: string, userId: string, type: string, content: Record<string, unknown>): Promise<void> {
    await this.call('PUT', `/_matrix/client/v3/user/${encodeURIComponent(userId)}/account_data/${encodeURIComponent(type)}`, z.object({}), content, token);
  }
}

/** Runs `tasks` with at most `limit` in flight; rejects on the first failure. */
export async function runPool<T>(items: readonly T[], limit: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (failed === undefined && next < items.length) {
      const i = next++;
      try {
        await task(items[i] as T, i);
      } catch (error) {
        failed ??= error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  if (failed !== undefined) throw failed;
}
