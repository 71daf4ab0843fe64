/*
 * loadgate k6 scenario for Mattermost (API v4 + WebSocket).
 *
 * Each VU is one simulated user: it logs in, loads its teams and channels, holds a
 * WebSocket open (so the server counts it as a connected user and pushes events to it),
 * then performs actions chosen at random by the ceiling-test relative frequencies,
 * waiting load-test-ng's idle time between them:
 *   idle = round(uniform[min, 2*avg - min) * rateMultiplier)   (simulcontroller PickIdleTimeMs)
 * The session runs until k6 stops the VU, so the script suits the externally-controlled
 * executor (the coordinator scales VUs up and down) as well as ramping/constant VUs.
 *
 * Client metrics are named after load-test-ng's, so the ceiling-test health queries work
 * unchanged on k6 runs:
 *   loadtest_http_request_time   Trend, seconds, per completed request
 *   loadtest_http_errors_total   Counter, tagged status_code (0 = no response)
 *   loadtest_http_timeouts_total Counter
 *
 * Environment (all read once, at init; names shared with the other scenarios, see
 * src/engine/k6/README.md):
 *   LOADGATE_BASE_URL           required, e.g. http://10.0.1.10 (the proxy) or http://127.0.0.1:8065
 *   LOADGATE_WS_URL             default: BASE_URL with ws:// or wss://
 *   LOADGATE_USERS_FILE         required, absolute path; lines "login password" (# comments
 *                               allowed) or a JSON array of {"username"|"email"|"login", "password"}
 *   LOADGATE_ACTIONS            required, JSON {"Action": relativeFrequency}; loadgate passes the
 *                               config's engine.actions, else the ceiling table (CEILING_ACTION_FREQUENCIES
 *                               in src/chat-servers/mattermost/defaults.ts)
 *   LOADGATE_IDLE_MIN_MS        default 1000;  LOADGATE_IDLE_AVG_MS default 20000
 *   LOADGATE_IDLE_RATE          idle multiplier, default 5.4 (alias LOADGATE_RATE)
 *   LOADGATE_REQUEST_TIMEOUT_MS default 5000, load-test-ng's client timeout
 *   LOADGATE_MAX_USERS          when set, the scenario is defined here: externally-controlled
 *                               with LOADGATE_INITIAL_USERS VUs (default 0) up to MAX_USERS, or,
 *                               with LOADGATE_RAMP_UP set, ramping-vus to MAX_USERS over RAMP_UP
 *                               and held; both end after LOADGATE_DURATION (default 6h).
 *                               Unset: scenarios come from the k6 command line.
 *
 * Besides the metrics above, every request also feeds the shared counters of
 * ./lib/metrics.js, which loadgate's exporter turns into the same Prometheus series when
 * it reads k6 through its REST API.
 *
 * Request bodies come from ./lib/mattermost-bodies.js, typed with @mattermost/types and
 * checked by `npm run typecheck`; test/chat-servers/mattermost/k6-scenario.test.ts runs every
 * action and checks each request against Mattermost's API v4 description.
 *
 * Only k6 modules are used. Run k6 with K6_AUTO_EXTENSION_RESOLUTION=false and
 * --no-usage-report so it makes no outbound calls of its own.
 */
import http from 'k6/http';
// k6 documents k6/experimental/websockets as deprecated in favour of k6/websockets, but the
// pinned k6 (engine.version v1.4.2) does not have k6/websockets yet: `k6 inspect` on a
// script importing it fails with 'unknown modules ["k6/websockets"]'. Switch the import
// when the pinned version ships it; the API (WebSocket, onopen/onclose, send) is the same.
import { WebSocket } from 'k6/experimental/websockets';
import { setTimeout, clearTimeout } from 'k6/timers';
import { Counter, Trend } from 'k6/metrics';
import { SharedArray } from 'k6/data';
import { sleep } from 'k6';
import exec from 'k6/execution';
import { recordResponse, countAction, declareAction, touchMetrics } from './lib/metrics.js';
import {
  loginBody,
  viewChannelBody,
  persistentPriority,
  postBody,
  patchPostBody,
  reactionBody,
  searchUsersBody,
  searchPostsBody,
  searchChannelsBody,
  createChannelBody,
  addChannelMemberBody,
  createCategoryBody,
  toggledCategoryBody,
  customStatusBody,
  postReminderBody,
} from './lib/mattermost-bodies.js';

// ---------------------------------------------------------------------------
// Configuration (init context)
// ---------------------------------------------------------------------------

function requiredEnv(name) {
  const value = __ENV[name];
  if (!value) throw new Error(`${name} is not set; see the header of mattermost.js for the environment this scenario reads`);
  return value;
}

function numberEnv(name, fallback, min) {
  const raw = __ENV[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`${name}=${raw}: expected a number >= ${min}`);
  return value;
}

const BASE_URL = requiredEnv('LOADGATE_BASE_URL').replace(/\/+$/, '');
if (!/^https?:\/\//.test(BASE_URL)) throw new Error(`LOADGATE_BASE_URL=${BASE_URL}: expected an http:// or https:// URL`);
const WS_URL = (__ENV.LOADGATE_WS_URL || BASE_URL.replace(/^http/, 'ws')).replace(/\/+$/, '') + '/api/v4/websocket';
const API = `${BASE_URL}/api/v4`;
const REQUEST_TIMEOUT_MS = numberEnv('LOADGATE_REQUEST_TIMEOUT_MS', 5000, 1);
const IDLE_MIN_MS = numberEnv('LOADGATE_IDLE_MIN_MS', 1000, 0);
const IDLE_AVG_MS = numberEnv('LOADGATE_IDLE_AVG_MS', 20000, 1);
const RATE = __ENV.LOADGATE_IDLE_RATE ? numberEnv('LOADGATE_IDLE_RATE', 5.4, 0) : numberEnv('LOADGATE_RATE', 5.4, 0);
if (IDLE_AVG_MS <= IDLE_MIN_MS) throw new Error(`LOADGATE_IDLE_AVG_MS (${IDLE_AVG_MS}) must be greater than LOADGATE_IDLE_MIN_MS (${IDLE_MIN_MS})`);

/** Credentials, parsed once and shared by all VUs. */
const USERS = new SharedArray('loadgate users', function () {
  const path = requiredEnv('LOADGATE_USERS_FILE');
  const text = open(path);
  const list = [];
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    for (const entry of JSON.parse(trimmed)) {
      const login = entry.login || entry.username || entry.email;
      if (!login || !entry.password) throw new Error(`${path}: every entry needs a username (or email) and a password`);
      list.push({ login: String(login), password: String(entry.password) });
    }
  } else {
    trimmed.split('\n').forEach((line, i) => {
      const clean = line.trim();
      if (!clean || clean.startsWith('#')) return;
      const parts = clean.split(/[\s,]+/);
      if (parts.length < 2) throw new Error(`${path} line ${i + 1}: expected "login password"`);
      // load-test-ng's users files may prefix the login with its auth service ("openid:...").
      const login = parts[0].replace(/^(mattermost|ldap|saml|openid):/, '');
      list.push({ login, password: parts.slice(1).join(' ') });
    });
  }
  if (list.length === 0) throw new Error(`${path} holds no users`);
  return list;
});

function scenarioOptions() {
  if (!__ENV.LOADGATE_MAX_USERS) return {};
  const maxUsers = numberEnv('LOADGATE_MAX_USERS', 1, 1);
  const duration = __ENV.LOADGATE_DURATION || '6h';
  seconds(duration);
  if (__ENV.LOADGATE_RAMP_UP) {
    const rampUp = __ENV.LOADGATE_RAMP_UP;
    return {
      scenarios: {
        users: {
          executor: 'ramping-vus',
          startVUs: 0,
          // Hold after the ramp; k6 ends at the scenario's total, ramp included.
          stages: [
            { duration: rampUp, target: maxUsers },
            { duration: remaining(duration, rampUp), target: maxUsers },
          ],
          gracefulRampDown: '5s',
          gracefulStop: '5s',
        },
      },
    };
  }
  const initialUsers = numberEnv('LOADGATE_INITIAL_USERS', 0, 0);
  if (initialUsers > maxUsers) throw new Error('LOADGATE_INITIAL_USERS must not exceed LOADGATE_MAX_USERS');
  return { scenarios: { users: { executor: 'externally-controlled', vus: initialUsers, maxVUs: maxUsers, duration } } };
}

function seconds(text) {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!m || text === '') throw new Error(`"${text}": expected a duration such as 90s, 15m or 1h30m`);
  return Number(m[1] || 0) * 3600 + Number(m[2] || 0) * 60 + Number(m[3] || 0);
}

function remaining(total, rampUp) {
  const left = seconds(total) - seconds(rampUp);
  if (left <= 0) throw new Error(`LOADGATE_RAMP_UP (${rampUp}) must be shorter than LOADGATE_DURATION (${total})`);
  return `${left}s`;
}

export const options = Object.assign(
  {
    // Few system tags: ids in URLs would otherwise make a time series per URL.
    systemTags: ['status', 'method', 'name', 'error_code', 'scenario', 'expected_response'],
    userAgent: 'loadgate-k6 (mattermost scenario)',
  },
  scenarioOptions(),
);

/** Reports the shared counters from the first scrape on, before any traffic. */
export function setup() {
  touchMetrics();
}

// ---------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------

const requestTime = new Trend('loadtest_http_request_time');
const httpErrors = new Counter('loadtest_http_errors_total');
const httpTimeouts = new Counter('loadtest_http_timeouts_total');
const wsErrors = new Counter('loadgate_websocket_errors_total');
const scriptErrors = new Counter('loadgate_script_errors');

// ---------------------------------------------------------------------------
// HTTP helpers
// ---------------------------------------------------------------------------

/** The session of this VU; each VU has its own JS runtime, so module state is per user. */
const session = {
  user: null,
  token: '',
  userId: '',
  teams: [],
  teamId: '',
  channels: {},
  channelId: '',
  posts: {},
  ownPosts: [],
  threads: [],
  otherUsers: [],
  isAdmin: false,
  ws: null,
  wsRetry: null,
  action: 'Login',
};

/**
 * Accounts one response, load-test-ng style: request time for answered requests, errors by
 * status code (0 = no response), timeouts apart. Requests cut off because k6 is stopping
 * the VU are not the server's fault and are not counted. Returns whether it succeeded.
 */
function account(res, wallMs, name) {
  const outcome = recordResponse(res, wallMs);
  if (outcome === 'cancelled') return false;
  if (outcome === 'timeout') {
    httpTimeouts.add(1, { name });
    return false;
  }
  if (res.status !== 0) requestTime.add((res.timings.connecting + res.timings.tls_handshaking + res.timings.duration) / 1000, { name });
  if (outcome === 'error') {
    httpErrors.add(1, { status_code: String(res.status), name });
    return false;
  }
  return true;
}

function requestParams(name) {
  const params = {
    headers: { 'Content-Type': 'application/json', 'X-Requested-With': 'XMLHttpRequest' },
    tags: { name, action: session.action },
    timeout: `${REQUEST_TIMEOUT_MS}ms`,
    responseType: 'text',
  };
  if (session.token) params.headers.Authorization = `Bearer ${session.token}`;
  return params;
}

/**
 * One API call. `name` is a route template so tags stay low-cardinality. Returns the
 * parsed JSON body, or null on any failure.
 */
function api(method, path, body, name) {
  const params = requestParams(`${method} ${name}`);
  const payload = body === undefined ? null : JSON.stringify(body);
  const started = Date.now();
  const res = http.request(method, `${API}${path}`, payload, params);
  if (!account(res, Date.now() - started, params.tags.name)) return null;
  if (!res.body) return {};
  try {
    return JSON.parse(res.body);
  } catch (e) {
    return {};
  }
}

function pick(list) {
  return list.length ? list[Math.floor(Math.random() * list.length)] : undefined;
}

function randomWord() {
  const words = ['release', 'deploy', 'lunch', 'review', 'meeting', 'ticket', 'design', 'metrics', 'rollout', 'incident', 'budget', 'hiring'];
  return pick(words);
}

function sentence(words) {
  const out = [];
  for (let i = 0; i < words; i++) out.push(randomWord());
  return out.join(' ');
}

/** simulcontroller PickIdleTimeMs: uniform in [min, 2*avg - min), times the rate. */
export function pickIdleTimeMs(minMs, avgMs, rate) {
  const idle = Math.floor(Math.random() * (avgMs * 2 - minMs * 2)) + minMs;
  return Math.round(idle * rate);
}

function pickAction() {
  const r = Math.random() * ACTIONS.total;
  for (const entry of ACTIONS.cumulative) if (r < entry.upTo) return entry.name;
  return ACTIONS.cumulative[ACTIONS.cumulative.length - 1].name;
}

// ---------------------------------------------------------------------------
// Session: login, initial load, WebSocket
// ---------------------------------------------------------------------------

function login() {
  session.action = 'Login';
  session.token = '';
  countAction('Login');
  const user = session.user;
  const params = requestParams('POST /users/login');
  const started = Date.now();
  const res = http.post(`${API}/users/login`, JSON.stringify(loginBody(user.login, user.password)), params);
  if (!account(res, Date.now() - started, params.tags.name)) return false;
  const token = res.headers.Token || res.headers.token;
  let me;
  try {
    me = JSON.parse(res.body);
  } catch (e) {
    me = null;
  }
  if (!token || !me || !me.id) {
    scriptErrors.add(1);
    return false;
  }
  session.token = token;
  session.userId = me.id;
  // Roles are a space-separated list (model.User.Roles); system_admin gates the admin-only actions.
  session.isAdmin = typeof me.roles === 'string' && me.roles.split(' ').indexOf('system_admin') >= 0;
  return true;
}

/** What the web app loads after login: the user, teams, channels, unreads, preferences. */
function initialLoad() {
  session.action = 'InitialLoad';
  api('GET', '/users/me', undefined, '/users/me');
  const teams = api('GET', '/users/me/teams', undefined, '/users/me/teams') || [];
  session.teams = teams.map((t) => t.id).filter(Boolean);
  api('GET', '/users/me/teams/members', undefined, '/users/me/teams/members');
  api('GET', '/users/me/preferences', undefined, '/users/me/preferences');
  api('GET', '/users/me/teams/unread', undefined, '/users/me/teams/unread');
  if (!session.teams.length) return;
  selectTeam(session.teamId && session.teams.indexOf(session.teamId) >= 0 ? session.teamId : session.teams[0]);
}

function selectTeam(teamId) {
  session.teamId = teamId;
  const channels = api('GET', `/users/me/teams/${teamId}/channels`, undefined, '/users/me/teams/{team}/channels') || [];
  session.channels[teamId] = channels.map((c) => ({ id: c.id, type: c.type, name: c.name }));
  api('GET', `/users/me/teams/${teamId}/channels/members`, undefined, '/users/me/teams/{team}/channels/members');
  const first = pick(session.channels[teamId].filter((c) => c.type === 'O')) || pick(session.channels[teamId]);
  if (first) viewChannel(first.id);
}

function connectWebSocket() {
  closeWebSocket();
  const ws = new WebSocket(WS_URL, null, { headers: { Authorization: `Bearer ${session.token}` }, tags: { name: 'WS /websocket' } });
  session.ws = ws;
  ws.onopen = () => {
    // Mattermost also accepts an in-band challenge; sending it covers proxies that drop headers.
    ws.send(JSON.stringify({ seq: 1, action: 'authentication_challenge', data: { token: session.token } }));
  };
  ws.onerror = () => wsErrors.add(1);
  ws.onclose = () => {
    if (session.ws !== ws) return; // closed on purpose and replaced
    session.ws = null;
    // Reconnect like the web app does, with a bounded random back-off.
    session.wsRetry = setTimeout(
      () => {
        session.wsRetry = null;
        if (session.token) connectWebSocket();
      },
      1000 + Math.random() * 4000,
    );
  };
}

function closeWebSocket() {
  if (session.wsRetry) {
    clearTimeout(session.wsRetry);
    session.wsRetry = null;
  }
  const ws = session.ws;
  session.ws = null;
  if (ws) ws.close();
}

// ---------------------------------------------------------------------------
// Actions
// ---------------------------------------------------------------------------

function currentChannels() {
  return session.channels[session.teamId] || [];
}

function rememberPosts(channelId, body) {
  if (!body || !body.order) return;
  const posts = body.posts || {};
  session.posts[channelId] = body.order.slice();
  for (const id of body.order) {
    const post = posts[id];
    if (!post) continue;
    if (post.user_id && post.user_id !== session.userId && session.otherUsers.indexOf(post.user_id) < 0) {
      session.otherUsers.push(post.user_id);
      if (session.otherUsers.length > 200) session.otherUsers.shift();
    }
  }
}

function viewChannel(channelId) {
  api('POST', '/channels/members/me/view', viewChannelBody(channelId, session.channelId || ''), '/channels/members/me/view');
  session.channelId = channelId;
  rememberPosts(channelId, api('GET', `/channels/${channelId}/posts?page=0&per_page=60`, undefined, '/channels/{channel}/posts'));
}

function anyPostId() {
  return pick(session.posts[session.channelId] || []) || pick(session.ownPosts);
}

function createPost(channelId, priority) {
  const roots = session.posts[channelId] || [];
  const message = sentence(3 + Math.floor(Math.random() * 20));
  // simulcontroller: 18% of posts are replies. Not a post with a priority: Mattermost refuses
  // metadata.priority on a reply with 400 (priority is allowed on root posts only).
  const rootId = roots.length && !priority && Math.random() < 0.18 ? pick(roots) : '';
  const post = api('POST', '/posts', postBody(channelId, message, rootId, priority), '/posts');
  if (post && post.id) {
    session.ownPosts.push(post.id);
    if (session.ownPosts.length > 50) session.ownPosts.shift();
  }
  return post;
}

function threadsPath() {
  return `/users/${session.userId}/teams/${session.teamId}/threads`;
}

const actions = {
  SwitchChannel() {
    const channel = pick(currentChannels().filter((c) => c.id !== session.channelId)) || pick(currentChannels());
    if (channel) viewChannel(channel.id);
  },
  ScrollChannel() {
    if (!session.channelId) return actions.SwitchChannel();
    const seen = session.posts[session.channelId] || [];
    const oldest = seen[seen.length - 1];
    const before = oldest ? `&before=${oldest}` : '';
    const body = api('GET', `/channels/${session.channelId}/posts?page=0&per_page=30${before}`, undefined, '/channels/{channel}/posts?before');
    if (body && body.order && body.order.length) session.posts[session.channelId] = seen.concat(body.order).slice(-300);
  },
  UnreadCheck() {
    api('GET', '/users/me/teams/unread', undefined, '/users/me/teams/unread');
  },
  CreatePost() {
    if (!session.channelId) return actions.SwitchChannel();
    createPost(session.channelId);
  },
  OpenDirectOrGroupChannel() {
    const dm = pick(currentChannels().filter((c) => c.type === 'D' || c.type === 'G'));
    if (dm) viewChannel(dm.id);
    else actions.SwitchChannel();
  },
  ViewGlobalThreads() {
    const body = api('GET', `${threadsPath()}?per_page=25&extended=true&deleted=false&unread=false`, undefined, '/users/{user}/teams/{team}/threads');
    if (body && body.threads)
      session.threads = body.threads
        .map((t) => t.id)
        .filter(Boolean)
        .slice(0, 50);
  },
  UpdateThreadRead() {
    const thread = pick(session.threads);
    if (!thread) return actions.ViewGlobalThreads();
    api('PUT', `${threadsPath()}/${thread}/read/${Date.now()}`, undefined, '/users/{user}/teams/{team}/threads/{thread}/read/{time}');
  },
  ClickPermalink() {
    const postId = anyPostId();
    if (!postId) return actions.SwitchChannel();
    const post = api('GET', `/posts/${postId}`, undefined, '/posts/{post}');
    if (post && post.channel_id) rememberPosts(post.channel_id, api('GET', `/posts/${postId}/thread`, undefined, '/posts/{post}/thread'));
  },
  ViewThread() {
    const postId = pick(session.threads) || anyPostId();
    if (!postId) return actions.ViewGlobalThreads();
    api('GET', `/posts/${postId}/thread?skipFetchThreads=false&collapsedThreads=true&collapsedThreadsExtended=false`, undefined, '/posts/{post}/thread');
  },
  ReconnectWebSocket() {
    connectWebSocket();
  },
  AddReaction() {
    const postId = anyPostId();
    if (!postId) return actions.SwitchChannel();
    api('POST', '/reactions', reactionBody(session.userId, postId, pick(['+1', 'smile', 'tada', 'eyes', 'white_check_mark'])), '/reactions');
  },
  EditPost() {
    const postId = pick(session.ownPosts);
    if (!postId) return actions.CreatePost();
    api('PUT', `/posts/${postId}/patch`, patchPostBody(sentence(8)), '/posts/{post}/patch');
  },
  SearchUsers() {
    api('POST', '/users/search', searchUsersBody(randomWord().slice(0, 3), session.teamId), '/users/search');
  },
  ClickUserProfile() {
    const userId = pick(session.otherUsers) || session.userId;
    api('GET', `/users/${userId}`, undefined, '/users/{user}');
    api('POST', '/users/status/ids', [userId], '/users/status/ids');
  },
  SearchPosts() {
    api('POST', `/teams/${session.teamId}/posts/search`, searchPostsBody(randomWord()), '/teams/{team}/posts/search');
  },
  SearchGroupChannels() {
    api('POST', '/channels/group/search', searchChannelsBody(randomWord().slice(0, 3)), '/channels/group/search');
  },
  SearchChannels() {
    api('POST', `/teams/${session.teamId}/channels/search`, searchChannelsBody(randomWord().slice(0, 3)), '/teams/{team}/channels/search');
  },
  CreateDirectChannel() {
    const other = pick(session.otherUsers);
    if (!other) return actions.SearchUsers();
    const channel = api('POST', '/channels/direct', [session.userId, other], '/channels/direct');
    if (channel && channel.id) viewChannel(channel.id);
  },
  UnfollowThread() {
    const thread = pick(session.threads);
    if (!thread) return actions.ViewGlobalThreads();
    api('DELETE', `${threadsPath()}/${thread}/following`, undefined, '/users/{user}/teams/{team}/threads/{thread}/following');
  },
  FollowThread() {
    const thread = pick(session.threads);
    if (!thread) return actions.ViewGlobalThreads();
    api('PUT', `${threadsPath()}/${thread}/following`, undefined, '/users/{user}/teams/{team}/threads/{thread}/following');
  },
  JoinChannel() {
    const page = Math.floor(Math.random() * 5);
    const open = api('GET', `/teams/${session.teamId}/channels?page=${page}&per_page=50`, undefined, '/teams/{team}/channels') || [];
    const mine = currentChannels().map((c) => c.id);
    const target = pick(open.filter((c) => mine.indexOf(c.id) < 0));
    if (!target) return;
    if (api('POST', `/channels/${target.id}/members`, addChannelMemberBody(session.userId), '/channels/{channel}/members')) {
      currentChannels().push({ id: target.id, type: target.type, name: target.name });
      viewChannel(target.id);
    }
  },
  DeletePost() {
    const postId = session.ownPosts.pop();
    if (!postId) return actions.CreatePost();
    api('DELETE', `/posts/${postId}`, undefined, '/posts/{post}');
  },
  UpdateSidebarCategory() {
    const path = `/users/${session.userId}/teams/${session.teamId}/channels/categories`;
    const body = api('GET', path, undefined, '/users/{user}/teams/{team}/channels/categories');
    const category = body && body.categories ? pick(body.categories) : undefined;
    if (!category) return;
    api('PUT', `${path}/${category.id}`, toggledCategoryBody(category), '/users/{user}/teams/{team}/channels/categories/{category}');
  },
  CreateGroupChannel() {
    const others = session.otherUsers.slice(0, 2);
    if (others.length < 2) return actions.SearchUsers();
    const channel = api('POST', '/channels/group', [session.userId].concat(others), '/channels/group');
    if (channel && channel.id) viewChannel(channel.id);
  },
  UpdateCustomStatus() {
    api('PUT', '/users/me/status/custom', customStatusBody(pick(['calendar', 'palm_tree', 'house']), sentence(2)), '/users/me/status/custom');
  },
  RemoveCustomStatus() {
    api('DELETE', '/users/me/status/custom', undefined, '/users/me/status/custom');
  },
  FullReload() {
    initialLoad();
    connectWebSocket();
  },
  LogoutLogin() {
    closeWebSocket();
    api('POST', '/users/logout', undefined, '/users/logout');
    if (!login()) return;
    initialLoad();
    connectWebSocket();
  },
  CreatePostReminder() {
    const postId = anyPostId();
    if (!postId) return actions.CreatePost();
    api(
      'POST',
      `/users/${session.userId}/posts/${postId}/reminder`,
      postReminderBody(Math.floor(Date.now() / 1000) + 3600),
      '/users/{user}/posts/{post}/reminder',
    );
  },
  CreatePrivateChannel() {
    createChannel('P');
  },
  SwitchTeam() {
    const other = pick(session.teams.filter((t) => t !== session.teamId));
    if (other) selectTeam(other);
    else actions.SwitchChannel();
  },
  CreateSidebarCategory() {
    api(
      'POST',
      `/users/${session.userId}/teams/${session.teamId}/channels/categories`,
      createCategoryBody(session.userId, session.teamId, `loadgate ${randomWord()}`),
      '/users/{user}/teams/{team}/channels/categories',
    );
  },
  CreatePublicChannel() {
    createChannel('O');
  },
  MarkAllThreadsInTeamAsRead() {
    api('PUT', `${threadsPath()}/read`, undefined, '/users/{user}/teams/{team}/threads/read');
  },
  // load-test-ng posts into a channel under an access policy; the closest stock-API
  // equivalent is a post into a private channel the user belongs to.
  CreateAclPost() {
    const channel = pick(currentChannels().filter((c) => c.type === 'P'));
    if (!channel) return actions.CreatePost();
    createPost(channel.id);
  },
  AckToPost() {
    const postId = anyPostId();
    if (!postId) return actions.CreatePost();
    api('POST', `/users/${session.userId}/posts/${postId}/ack`, undefined, '/users/{user}/posts/{post}/ack');
  },
  CreatePersistentNotificationPost() {
    const dm = pick(currentChannels().filter((c) => c.type === 'D' || c.type === 'G'));
    if (!dm) return actions.CreatePost();
    createPost(dm.id, persistentPriority());
  },
  GenerateUserReport() {
    // Needs sysconsole_read_user_management_users: a regular user gets 403 every time, so
    // load-test-ng (simulcontroller generateUserReport) skips it for non-admins, as here.
    if (!session.isAdmin) return;
    api('GET', '/reports/users?page_size=50&sort_column=Username&sort_direction=asc', undefined, '/reports/users');
  },
};

function createChannel(type) {
  const name = `lg-${type.toLowerCase()}-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6).toString(36)}`;
  const channel = api('POST', '/channels', createChannelBody(session.teamId, name, type), '/channels');
  if (channel && channel.id) {
    currentChannels().push({ id: channel.id, type, name });
    viewChannel(channel.id);
  }
}

let loggedErrors = 0;

/** Parses the action table and builds a cumulative distribution for weighted picks. */
function actionTable() {
  const text = requiredEnv('LOADGATE_ACTIONS');
  let table;
  try {
    table = JSON.parse(text);
  } catch (e) {
    throw new Error(`LOADGATE_ACTIONS is not valid JSON: ${e}`);
  }
  const names = Object.keys(table);
  const cumulative = [];
  let total = 0;
  for (const name of names) {
    if (!Object.hasOwn(actions, name)) throw new Error(`LOADGATE_ACTIONS: unknown action "${name}"; known actions: ${Object.keys(actions).join(', ')}`);
    const weight = table[name];
    if (typeof weight !== 'number' || !(weight >= 0)) throw new Error(`LOADGATE_ACTIONS.${name}: expected a frequency >= 0`);
    if (weight === 0) continue;
    total += weight;
    cumulative.push({ name, upTo: total });
  }
  if (total <= 0) throw new Error('LOADGATE_ACTIONS: at least one action needs a frequency above 0');
  return { cumulative, total };
}
const ACTIONS = actionTable();
declareAction('Login');
for (const entry of ACTIONS.cumulative) declareAction(entry.name);

/**
 * One action of this user's session. Exported, with startSession and endSession, so a test
 * can run every action in turn and check each request against Mattermost's API description.
 */
export function runAction(name) {
  session.action = name;
  countAction(name);
  try {
    if (!session.teamId && name !== 'ReconnectWebSocket' && name !== 'LogoutLogin' && name !== 'FullReload') {
      // A user with no team can only check in; load-test-ng's users always have one.
      actions.UnreadCheck();
      return;
    }
    actions[name]();
  } catch (e) {
    // An exception in a timer callback would end this user's session: count it and go on.
    scriptErrors.add(1);
    if (loggedErrors++ < 3) console.error(`VU ${exec.vu.idInTest} ${name}: ${e}`);
  }
}

// ---------------------------------------------------------------------------
// VU loop
// ---------------------------------------------------------------------------

/** Logs `user` in, loads what the web app loads and opens the WebSocket; false if the login failed. */
export function startSession(user) {
  session.user = user;
  if (!login()) return false;
  initialLoad();
  connectWebSocket();
  return true;
}

/** Closes the WebSocket, so k6 can end the iteration. */
export function endSession() {
  closeWebSocket();
}

/** Sessions end on their own when the scenario's duration is known, instead of being cut. */
const END_MS = __ENV.LOADGATE_DURATION ? seconds(__ENV.LOADGATE_DURATION) * 1000 : Infinity;

function msLeft() {
  return END_MS - exec.instance.currentTestRunDuration;
}

export default function () {
  if (msLeft() <= 0) {
    // The run is over but k6 has not stopped this VU yet: don't log in again.
    sleep(1);
    return;
  }
  const users = USERS;
  if (!startSession(users[(exec.vu.idInTest - 1) % users.length])) {
    // Back off and let the next iteration retry, as a user would reload the page.
    sleep(1 + Math.random() * 4);
    return;
  }

  // The session lives until k6 stops this VU or the run's end: each action schedules the next.
  const next = () => {
    const left = msLeft();
    if (left <= 0) {
      endSession();
      return;
    }
    const idle = pickIdleTimeMs(IDLE_MIN_MS, IDLE_AVG_MS, RATE);
    setTimeout(
      () => {
        if (idle > left) {
          endSession();
          return;
        }
        runAction(pickAction());
        next();
      },
      Math.min(idle, left),
    );
  };
  next();
}
