import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import type { ChannelCategory, OrderedChannelCategories } from '@mattermost/types/channel_categories';
import type { Channel, ChannelMembership } from '@mattermost/types/channels';
import type { StatusOK } from '@mattermost/types/client4';
import type { ClientConfig, ClientLicense } from '@mattermost/types/config';
import type { Post as MattermostPost, PostAcknowledgement, PostList, PostPriorityMetadata } from '@mattermost/types/posts';
import type { Reaction } from '@mattermost/types/reactions';
import type { Team, TeamUnread } from '@mattermost/types/teams';
import type { UserThread, UserThreadList } from '@mattermost/types/threads';
import type { UserProfile, UserStatus, UsersStats } from '@mattermost/types/users';
import type { UserReport } from '@mattermost/types/reports';

/**
 * A tiny stand-in for the Mattermost API v4 routes the k6 scenario's actions use, plus the
 * WebSocket upgrade, on 127.0.0.1. Answers are typed with @mattermost/types. It is not Mattermost: it keeps just
 * enough state (users, one team, channels, posts) for the answers to be consistent, and
 * counts what it was asked so a test can check the scenario's traffic.
 *
 * Like Mattermost with MetricsSettings enabled, it serves Prometheus metrics on a second
 * listener (startMetrics), under the names of Mattermost's performance-monitoring docs:
 * the mattermost_api_time{handler,method,status_code} and mattermost_db_store_time{method}
 * histograms (seconds), mattermost_http_requests_total, mattermost_http_errors_total,
 * mattermost_http_websockets_total, mattermost_process_cpu_seconds_total, and the Go
 * runtime's go_goroutines and go_memstats_{heap,stack}_inuse_bytes. Every answer carries
 * X-Version-Id, as Mattermost's do. `latencyPerUserMs` slows every request down by that
 * much per connected websocket, so a coordinator finds an equilibrium.
 */

/** The fields of Mattermost's Post (@mattermost/types) the stand-in keeps and answers with. */
type Post = Pick<MattermostPost, 'id' | 'channel_id' | 'user_id' | 'message' | 'root_id'>;
/** What a client may send to POST /posts (Client4.createPost takes a PartialExcept<Post, 'channel_id' | 'message'>). */
type PostRequest = Partial<Pick<MattermostPost, 'channel_id' | 'message' | 'root_id'>> & { metadata?: { priority?: PostPriorityMetadata } };
type Me = Pick<UserProfile, 'id' | 'username' | 'roles'>;
type ChannelRef = Pick<Channel, 'id' | 'type' | 'name'>;
/** The fields of a sidebar category the stand-in keeps (all but sorting, a declared enum). */
type Category = Pick<ChannelCategory, 'id' | 'user_id' | 'team_id' | 'type' | 'display_name' | 'channel_ids' | 'muted' | 'collapsed'>;
/** PostList without the paging fields, which the scenario does not read. */
type Posts = Pick<PostList, 'order'> & { posts: Record<string, Post> };
const OK: StatusOK = { status: 'OK' };

/** Prometheus' default buckets, which Mattermost's histograms use. */
const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Mattermost's API handler names (api4) for the routes the stand-in answers. */
const HANDLERS: Record<string, string> = {
  'POST /users/login': 'login',
  'GET /users/me': 'getUser',
  'GET /users/me/teams': 'getTeamsForUser',
  'GET /users/me/teams/members': 'getTeamMembersForUser',
  'GET /users/me/preferences': 'getPreferences',
  'GET /users/me/teams/{id}/channels/members': 'getChannelMembersForUser',
  'GET /users/me/teams/unread': 'getTeamsUnreadForUser',
  'GET /users/me/teams/{id}/channels': 'getChannelsForTeamForUser',
  'POST /channels/members/me/view': 'viewChannel',
  'GET /channels/{id}/posts': 'getPostsForChannel',
  'POST /posts': 'createPost',
  'GET /posts/{id}/thread': 'getPostThread',
  'POST /reactions': 'saveReaction',
  'GET /users/{id}/teams/{id}/threads': 'getThreadsForUser',
};

/** Store methods a handler calls, as mattermost_db_store_time{method} names them. */
const STORE_CALLS: Record<string, string[]> = {
  login: ['UserStore.GetForLogin', 'SessionStore.Save'],
  getUser: ['UserStore.Get'],
  getTeamsForUser: ['TeamStore.GetTeamsByUserId'],
  getChannelsForTeamForUser: ['ChannelStore.GetChannels'],
  viewChannel: ['ChannelStore.UpdateLastViewedAt'],
  getPostsForChannel: ['PostStore.GetPosts'],
  createPost: ['PostStore.Save', 'ChannelStore.IncrementMentionCount'],
  getPostThread: ['PostStore.Get'],
  saveReaction: ['ReactionStore.Save'],
  getThreadsForUser: ['ThreadStore.GetThreadsForUser'],
};

class Histogram {
  readonly series = new Map<string, { labels: Record<string, string>; counts: number[]; sum: number; count: number }>();
  observe(labels: Record<string, string>, seconds: number): void {
    const key = JSON.stringify(labels);
    const entry = this.series.get(key) ?? { labels, counts: BUCKETS.map(() => 0), sum: 0, count: 0 };
    BUCKETS.forEach((le, i) => {
      if (seconds <= le) entry.counts[i]!++;
    });
    entry.sum += seconds;
    entry.count++;
    this.series.set(key, entry);
  }
  render(name: string, help: string): string[] {
    const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`];
    const fmt = (labels: Record<string, string>) =>
      Object.entries(labels)
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
    for (const { labels, counts, sum, count } of this.series.values()) {
      BUCKETS.forEach((le, i) => lines.push(`${name}_bucket{${fmt({ ...labels, le: String(le) })}} ${counts[i]}`));
      lines.push(`${name}_bucket{${fmt({ ...labels, le: '+Inf' })}} ${count}`, `${name}_sum{${fmt(labels)}} ${sum}`, `${name}_count{${fmt(labels)}} ${count}`);
    }
    return lines;
  }
}

/** A licence as the stand-in keeps it: its id, when it expires and its seats (Features.Users). */
export interface StandInLicence {
  id: string;
  expiresAtMs: number;
  users: number;
}

/** model/license.go LicenseGracePeriod: ten days. */
const LICENCE_GRACE_PERIOD_MS = 10 * 24 * 3600 * 1000;

export class MattermostStandIn {
  readonly hits = new Map<string, number>();
  /**
   * Every request as received (path without the query), WebSocket upgrades included, with the
   * status answered, for checks against the API description.
   */
  readonly received: { method: string; path: string; query: string[]; body: unknown; status?: number }[] = [];
  /** The version it reports (X-Version-Id starts with it), as a release install would set it. */
  version = '10.12.0';
  /** Added to every request per connected websocket (ms). */
  latencyPerUserMs = 0;
  /**
   * The server process's own work for a request, by handler name (mattermost_api_time's
   * handler label), awaited before answering: a Go process standing for Mattermost's CPU
   * (test/support/mattermost-core), so its profile has a request's cost.
   */
  work: ((handler: string) => Promise<void>) | undefined;
  private readonly apiTime = new Histogram();
  private readonly storeTime = new Histogram();
  private httpRequests = 0;
  private httpErrors = 0;
  private metricsServer: Server | undefined;
  readonly users = new Map<string, { id: string; password: string; roles: string }>();
  /**
   * Whether a licence is installed. Unlicensed, Mattermost serves no /metrics at all (the
   * metrics server only starts with a licence; server/enterprise/metrics) and refuses
   * persistent notifications (501, Professional or higher).
   */
  licensed = true;
  /**
   * The licence rows of its database (Systems.ActiveLicenseId and its Licenses row), as a
   * loaded dump carries them; undefined: none. Only with `licenceFile` set (a bench node)
   * does start() decide `licensed` from these, as Mattermost does (loadLicence).
   */
  databaseLicence: StandInLicence | undefined;
  /** The licence at ServiceSettings.LicenseFileLocation; set, start() loads the licence as Mattermost does. */
  licenceFile: StandInLicence | undefined;
  /** Why the last start left it unlicensed, as Mattermost would log it. */
  licenceLog: string[] = [];
  /** Routes (as "METHOD /template") that answer 500, to exercise error accounting. */
  readonly failing = new Set<string>();
  wsOpened = 0;
  wsAuthenticated = 0;
  private readonly tokens = new Map<string, string>();
  private readonly posts = new Map<string, Post>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  readonly teamId = id();
  /** A second team, so switching teams has somewhere to go. */
  readonly otherTeamId = id();
  readonly channels: ChannelRef[] = [
    { id: id(), type: 'O', name: 'town-square' },
    { id: id(), type: 'O', name: 'off-topic' },
    { id: id(), type: 'P', name: 'private-1' },
    { id: id(), type: 'D', name: 'dm-1' },
  ];
  /** Public channels of the team nobody has joined yet (GET /teams/{id}/channels). */
  readonly openChannels: ChannelRef[] = [{ id: id(), type: 'O', name: 'open-1' }];
  private readonly categories = new Map<string, Category>();
  baseUrl = '';

  /** The client config's sign-up settings (bench defaults: all open, as load-test-ng's deployer sets them). */
  signUp: Pick<ClientConfig, 'EnableOpenServer' | 'EnableUserCreation' | 'EnableSignUpWithEmail'> = {
    EnableOpenServer: 'true',
    EnableUserCreation: 'true',
    EnableSignUpWithEmail: 'true',
  };

  /** `admin`: the account has the system_admin role (model.SystemAdminRoleId). */
  addUser(login: string, password: string, admin = false): void {
    this.users.set(login, { id: id(), password, roles: admin ? 'system_user system_admin' : 'system_user' });
  }

  /** Listens on `port` (0: any free one; a restart passes the previous one). */
  async start(port = 0): Promise<string> {
    if (this.licenceFile) this.loadLicence(Date.now());
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('upgrade', (req: IncomingMessage, socket: Socket) => this.upgrade(req, socket));
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.baseUrl;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  async stop(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
    this.server = undefined;
  }

  /** A root post by `login` in `channelId`, as a dataset would hold. */
  seedPost(login: string, channelId: string): Post {
    const user = this.users.get(login);
    if (!user) throw new Error(`seedPost: no user ${login}; addUser first`);
    const post: Post = { id: id(), channel_id: channelId, user_id: user.id, message: `seeded by ${login}`, root_id: '' };
    this.posts.set(post.id, post);
    return post;
  }

  /**
   * What Mattermost does with licences at start-up:
   * - server/channels/app/platform/license.go LoadLicense: a licence whose id is in
   *   Systems.ActiveLicenseId is used as it is (no expiry or seat check); only without one is
   *   the file at LicenseFileLocation read and saved through SaveLicense;
   * - SaveLicense refuses a licence whose Features.Users is below the count of users in the
   *   database ("api.license.add_license.unique_users.app_error") or that has expired, and
   *   otherwise stores it as the active licence;
   * - server/channels/app/server.go doLicenseExpirationCheck (run at start): a licence past
   *   its grace period (model/license.go IsPastGracePeriod, LicenseGracePeriod = 10 days)
   *   is removed (RemoveLicense blanks ActiveLicenseId), so the server runs unlicensed
   *   until its next start reads the file again.
   */
  private loadLicence(nowMs: number): void {
    this.licenceLog = [];
    let licence = this.databaseLicence;
    if (!licence && this.licenceFile) {
      const file = this.licenceFile;
      if (this.users.size > file.users) {
        this.licenceLog.push(
          `Failed to save license key loaded from disk: api.license.add_license.unique_users.app_error (Users: ${file.users}, Count: ${this.users.size})`,
        );
      } else if (file.expiresAtMs < nowMs) {
        this.licenceLog.push('Failed to save license key loaded from disk: the license has expired');
      } else {
        this.databaseLicence = licence = file;
      }
    }
    if (licence && nowMs - licence.expiresAtMs > LICENCE_GRACE_PERIOD_MS) {
      this.licenceLog.push(`Remove license: licence ${licence.id} is past its grace period`);
      this.databaseLicence = licence = undefined;
    }
    this.licensed = licence !== undefined;
  }

  /** Forgets the posts: a restored dataset. Users, team and channels stay. */
  resetData(): void {
    this.posts.clear();
  }

  /** The metrics listener (Mattermost's :8067); it stays up while the API restarts. */
  async startMetrics(): Promise<number> {
    this.metricsServer = createServer((req, res) => {
      if ((req.url ?? '').split('?')[0] !== '/metrics' || !this.licensed) return void res.writeHead(404).end();
      res.writeHead(200, { 'Content-Type': 'text/plain; version=0.0.4' }).end(this.renderMetrics());
    });
    await new Promise<void>((resolve) => this.metricsServer!.listen(0, '127.0.0.1', resolve));
    return (this.metricsServer.address() as AddressInfo).port;
  }

  async stopMetrics(): Promise<void> {
    if (!this.metricsServer) return;
    this.metricsServer.closeAllConnections();
    await new Promise<void>((resolve) => this.metricsServer!.close(() => resolve()));
    this.metricsServer = undefined;
  }

  renderMetrics(): string {
    const cpu = process.cpuUsage();
    const memory = process.memoryUsage();
    const lines = [
      ...this.apiTime.render('mattermost_api_time', 'Time to execute the api handler'),
      ...this.storeTime.render('mattermost_db_store_time', 'Time to execute the store method'),
      '# TYPE mattermost_http_requests_total counter',
      `mattermost_http_requests_total ${this.httpRequests}`,
      '# TYPE mattermost_http_errors_total counter',
      `mattermost_http_errors_total ${this.httpErrors}`,
      '# TYPE mattermost_http_websockets_total gauge',
      `mattermost_http_websockets_total{origin_client="web"} ${this.sockets.size}`,
      '# TYPE mattermost_process_cpu_seconds_total counter',
      `mattermost_process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`,
      '# TYPE go_goroutines gauge',
      `go_goroutines ${40 + 2 * this.sockets.size}`,
      '# TYPE go_memstats_heap_inuse_bytes gauge',
      `go_memstats_heap_inuse_bytes ${memory.heapUsed}`,
      '# TYPE go_memstats_stack_inuse_bytes gauge',
      `go_memstats_stack_inuse_bytes ${(40 + 2 * this.sockets.size) * 8192}`,
    ];
    return `${lines.join('\n')}\n`;
  }

  private count(route: string): void {
    this.hits.set(route, (this.hits.get(route) ?? 0) + 1);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
    const me = (uid: string): Me => {
      const [login, user] = [...this.users].find(([, u]) => u.id === uid) ?? ['', { roles: '' }];
      return { id: uid, username: login, roles: user.roles };
    };
    const url = new URL(req.url ?? '/', 'http://x');
    const path = url.pathname.replace(/^\/api\/v4/, '');
    const method = req.method ?? 'GET';
    const template = path.replace(/\/[a-z0-9]{26}(?=\/|$)/g, '/{id}').replace(/\/\d{10,}$/, '/{time}');
    const route = `${method} ${template}`;
    this.count(route);
    const entry: (typeof this.received)[number] = {
      method,
      path: url.pathname,
      query: [...url.searchParams.keys()],
      body: text ? (JSON.parse(text) as unknown) : undefined,
    };
    this.received.push(entry);
    const started = process.hrtime.bigint();
    if (this.latencyPerUserMs > 0 && route !== 'GET /system/ping') {
      await new Promise((resolve) => setTimeout(resolve, this.latencyPerUserMs * this.sockets.size));
    }
    if (this.work && HANDLERS[route]) await this.work(HANDLERS[route]);
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const handler = HANDLERS[route] ?? (route === 'GET /system/ping' ? 'getSystemPing' : 'unknown');
      this.apiTime.observe({ handler, method, status_code: String(status) }, seconds);
      for (const store of STORE_CALLS[handler] ?? []) this.storeTime.observe({ method: store }, seconds / 4);
      this.httpRequests++;
      entry.status = status;
      if (status >= 400) this.httpErrors++;
      res.writeHead(status, { 'Content-Type': 'application/json', 'X-Version-Id': `${this.version}.0.standin.false`, ...headers }).end(JSON.stringify(payload));
    };

    if (route === 'GET /system/ping') return send(200, OK);
    // No session needed. format=old: every value a string; IsLicensed "true"/"false" (api4/license.go getClientLicense).
    // utils/license.go GetClientLicense: Users is the licence's seats (Features.Users), kept by the sanitized form too.
    if (route === 'GET /license/client') {
      const licence: ClientLicense = { IsLicensed: String(this.licensed), SkuShortName: this.licensed ? 'enterprise' : '' };
      if (this.licensed) licence.Users = String(this.databaseLicence?.users ?? this.licenceFile?.users ?? 1000);
      return send(200, licence);
    }

    // No session needed, format=old: strings (api4/config.go getClientConfig); what a sign-up needs.
    if (route === 'GET /config/client') return send(200, { ...this.signUp } satisfies Partial<ClientConfig>);

    if (this.failing.has(route)) return send(500, { id: 'app.error', message: 'stand-in failure', status_code: 500 });
    if (route === 'POST /users/login') {
      const user = this.users.get(String(body.login_id));
      // api4/user.go login masks an unknown account and a wrong password alike (sign-in by email and username, no SSO).
      if (!user || user.password !== body.password) return send(401, { id: 'api.user.login.invalid_credentials_email_username', status_code: 401 });
      const token = randomBytes(13).toString('hex');
      this.tokens.set(token, user.id);
      return send(200, me(user.id), { Token: token });
    }
    const userId = this.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!userId) return send(401, { id: 'api.context.session_expired.app_error', status_code: 401 });
    const isAdmin = me(userId).roles.split(' ').includes('system_admin');

    // api4/user.go getUserByEmail (session required): the account, or 404 (app/user.go GetUserByEmail, MissingAccountError).
    if (method === 'GET' && path.startsWith('/users/email/')) {
      const found = this.users.get(decodeURIComponent(path.slice('/users/email/'.length)));
      return found ? send(200, me(found.id)) : send(404, { id: 'app.user.missing_account.const', status_code: 404 });
    }
    // api4/user.go getTotalUsersStats: the active users (UsersStats).
    if (route === 'GET /users/stats') return send(200, { total_users_count: this.users.size } satisfies UsersStats);

    const segment = (i: number): string => path.split('/')[i] ?? '';
    const postList = (posts: Post[]): Posts => ({ order: posts.map((p) => p.id).reverse(), posts: Object.fromEntries(posts.map((p) => [p.id, p])) });
    const request = body as Record<string, unknown>;

    switch (route) {
      case 'GET /users/me':
        return send(200, me(userId));
      case 'GET /users/{id}':
        return send(200, me(segment(2)));
      case 'GET /users/me/teams':
        return send(200, [
          { id: this.teamId, name: 'team' },
          { id: this.otherTeamId, name: 'team-2' },
        ] satisfies Pick<Team, 'id' | 'name'>[]);
      case 'GET /users/me/teams/members':
      case 'GET /users/me/preferences':
      case 'GET /users/me/teams/{id}/channels/members':
      case 'POST /channels/group/search':
      case 'POST /teams/{id}/channels/search':
        return send(200, []);
      case 'GET /users/me/teams/unread':
        return send(200, [{ team_id: this.teamId, msg_count: 0, mention_count: 0 }] satisfies Pick<TeamUnread, 'team_id' | 'msg_count' | 'mention_count'>[]);
      case 'GET /users/me/teams/{id}/channels':
        return send(200, this.channels);
      case 'GET /teams/{id}/channels':
        return send(200, this.openChannels);
      case 'POST /users/search':
        return send(
          200,
          [...this.users.values()].map((u) => me(u.id)),
        );
      case 'POST /users/status/ids':
        return send(
          200,
          (Array.isArray(body) ? (body as string[]) : []).map((uid) => ({ user_id: uid, status: 'online' }) satisfies Pick<UserStatus, 'user_id' | 'status'>),
        );
      case 'GET /reports/users':
        // Needs sysconsole_read_user_management_users (api4/report.go getUsersForReporting).
        if (!isAdmin) return send(403, { id: 'api.context.permissions.app_error', status_code: 403 });
        return send(
          200,
          [...this.users].map(([login, u]) => ({ id: u.id, username: login, roles: u.roles }) as Pick<UserReport, 'id' | 'username' | 'roles'>),
        );
      case 'POST /channels/members/me/view':
      case 'PUT /users/me/status/custom':
      case 'DELETE /users/me/status/custom':
      case 'POST /users/logout':
      case 'POST /users/{id}/posts/{id}/reminder':
      case 'PUT /users/{id}/teams/{id}/threads/read':
      case 'PUT /users/{id}/teams/{id}/threads/{id}/read/{time}':
      case 'PUT /users/{id}/teams/{id}/threads/{id}/following':
      case 'DELETE /users/{id}/teams/{id}/threads/{id}/following':
        return send(200, OK);
      case 'POST /channels': {
        const channel: ChannelRef = { id: id(), type: request.type === 'P' ? 'P' : 'O', name: String(request.name) };
        return send(201, channel);
      }
      case 'POST /channels/direct':
      case 'POST /channels/group': {
        const channel: ChannelRef = { id: id(), type: route.endsWith('direct') ? 'D' : 'G', name: (body as unknown as string[]).join('__') };
        return send(201, channel);
      }
      case 'POST /channels/{id}/members':
        return send(201, { channel_id: segment(2), user_id: String(request.user_id) } satisfies Pick<ChannelMembership, 'channel_id' | 'user_id'>);
      case 'GET /users/{id}/teams/{id}/channels/categories': {
        const teamId = segment(4);
        const mine = [...this.categories.values()].filter((c) => c.user_id === userId && c.team_id === teamId);
        if (!mine.length) {
          const channels: Category = {
            id: id(),
            user_id: userId,
            team_id: teamId,
            type: 'channels',
            display_name: 'Channels',
            channel_ids: this.channels.map((c) => c.id),
            muted: false,
            collapsed: false,
          };
          this.categories.set(channels.id, channels);
          mine.push(channels);
        }
        return send(200, { categories: mine, order: mine.map((c) => c.id) } satisfies Pick<OrderedChannelCategories, 'order'> & { categories: Category[] });
      }
      case 'POST /users/{id}/teams/{id}/channels/categories': {
        const category: Category = {
          id: id(),
          user_id: userId,
          team_id: segment(4),
          type: 'custom',
          display_name: String(request.display_name),
          channel_ids: [],
          muted: false,
          collapsed: false,
        };
        this.categories.set(category.id, category);
        return send(201, category);
      }
      case 'PUT /users/{id}/teams/{id}/channels/categories/{id}': {
        const category = this.categories.get(segment(7));
        if (!category) return send(404, { status_code: 404 });
        category.collapsed = request.collapsed === true;
        return send(200, category);
      }
      case 'GET /channels/{id}/posts': {
        const channelId = segment(2);
        return send(200, postList([...this.posts.values()].filter((p) => p.channel_id === channelId).slice(-60)));
      }
      case 'POST /teams/{id}/posts/search':
        return send(200, postList([]));
      case 'POST /posts': {
        const request = body as PostRequest;
        if (typeof request.channel_id !== 'string' || typeof request.message !== 'string')
          return send(400, { id: 'api.context.invalid_body_param', status_code: 400 });
        // api4/post.go createPost → app post priority checks: priority only on root posts, and
        // persistent notifications (or acknowledgements) need a Professional licence or higher.
        const priority = request.metadata?.priority;
        if (priority && request.root_id)
          return send(400, { id: 'api.post.post_priority.priority_post_only_allowed_for_root_post.request_error', status_code: 400 });
        if (priority && (priority.persistent_notifications || priority.requested_ack) && !this.licensed) {
          return send(501, { id: 'license_error.feature_unavailable', status_code: 501 });
        }
        const post: Post = { id: id(), channel_id: request.channel_id, user_id: userId, message: request.message, root_id: request.root_id ?? '' };
        this.posts.set(post.id, post);
        return send(201, post);
      }
      case 'GET /posts/{id}':
      case 'PUT /posts/{id}/patch':
      case 'DELETE /posts/{id}':
      case 'GET /posts/{id}/thread':
      case 'POST /users/{id}/posts/{id}/ack': {
        const post = this.posts.get(route.startsWith('POST /users') ? segment(4) : segment(2));
        if (!post) return send(404, { status_code: 404 });
        if (method === 'PUT') post.message = String(request.message);
        if (method === 'DELETE') {
          this.posts.delete(post.id);
          return send(200, OK);
        }
        if (route.endsWith('/ack')) return send(200, { post_id: post.id, user_id: userId, acknowledged_at: Date.now() } satisfies PostAcknowledgement);
        return send(200, route.endsWith('/thread') ? postList([post]) : post);
      }
      case 'POST /reactions':
        if (!this.posts.has(String(request.post_id))) return send(404, { status_code: 404 });
        return send(200, {
          user_id: userId,
          post_id: String(request.post_id),
          emoji_name: String(request.emoji_name),
          create_at: Date.now(),
        } satisfies Reaction);
      case 'GET /users/{id}/teams/{id}/threads': {
        const roots = [...this.posts.values()].filter((p) => !p.root_id).slice(0, 5);
        const threads = roots.map((p) => ({ id: p.id, reply_count: 0, is_following: true }) satisfies Pick<UserThread, 'id' | 'reply_count' | 'is_following'>);
        return send(200, { total: threads.length, threads: threads as UserThreadList['threads'] } satisfies Pick<UserThreadList, 'total' | 'threads'>);
      }
      default:
        return send(404, { id: 'api.context.404.app_error', status_code: 404 });
    }
  }

  /** RFC 6455 handshake, then just enough framing: auth challenge, ping, close. */
  private upgrade(req: IncomingMessage, socket: Socket): void {
    const key = req.headers['sec-websocket-key'];
    const url = new URL(req.url ?? '/', 'http://x');
    const entry: (typeof this.received)[number] = { method: req.method ?? 'GET', path: url.pathname, query: [...url.searchParams.keys()], body: undefined };
    this.received.push(entry);
    const userId = this.tokens.get((req.headers.authorization ?? '').replace(/^Bearer /, ''));
    if (!req.url?.startsWith('/api/v4/websocket') || typeof key !== 'string' || !userId) {
      entry.status = 401;
      socket.end('HTTP/1.1 401 Unauthorized\r\n\r\n');
      return;
    }
    entry.status = 101;
    const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
    this.wsOpened++;
    this.sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const frame = readFrame(pending);
        if (!frame) return;
        pending = pending.subarray(frame.size);
        if (frame.opcode === 0x1 && frame.payload.toString('utf8').includes('authentication_challenge')) this.wsAuthenticated++;
        // Answer pings and close handshakes as a server must, or clients wait on them.
        if (frame.opcode === 0x9) socket.write(Buffer.concat([Buffer.from([0x8a, frame.payload.length]), frame.payload]));
        if (frame.opcode === 0x8) {
          socket.end(Buffer.from([0x88, 0x00]));
          return;
        }
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.sockets.delete(socket));
  }
}

/** Parses one masked client frame (payloads under 64 KiB), or undefined if incomplete. */
function readFrame(buf: Buffer): { opcode: number; payload: Buffer; size: number } | undefined {
  if (buf.length < 2) return undefined;
  const opcode = buf[0]! & 0x0f;
  let len = buf[1]! & 0x7f;
  let offset = 2;
  if (len === 126) {
    if (buf.length < 4) return undefined;
    len = buf.readUInt16BE(2);
    offset = 4;
  } else if (len === 127) {
    throw new Error('stand-in: frames over 64 KiB are not supported');
  }
  const masked = (buf[1]! & 0x80) !== 0;
  const maskEnd = offset + (masked ? 4 : 0);
  if (buf.length < maskEnd + len) return undefined;
  const mask = buf.subarray(offset, maskEnd);
  const payload = Buffer.from(buf.subarray(maskEnd, maskEnd + len));
  if (masked) for (let i = 0; i < payload.length; i++) payload[i] = payload[i]! ^ mask[i % 4]!;
  return { opcode, payload, size: maskEnd + len };
}

function id(): string {
  // Mattermost ids: 26 lower-case base32 characters.
  const alphabet = 'abcdefghijkmnopqrstuwxyz13456789';
  let out = '';
  for (const b of randomBytes(26)) out += alphabet[b % 32];
  return out;
}
