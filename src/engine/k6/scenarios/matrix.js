// loadgate's Matrix client scenario for k6: simulated chat users against Synapse's
// client-server API (through nginx at LOADGATE_BASE_URL), modelled on load-test-ng's
// simulative controller: each user logs in, then repeats "pick an action by relative
// frequency, run it, idle" until the coordinator removes it.
//
// Environment (all set by src/engine/k6/runner.ts):
//   LOADGATE_BASE_URL        e.g. http://127.0.0.1:8080 (loopback only)
//   LOADGATE_USERS_FILE      JSON [{ user_id, localpart, password, rooms: [ids], dms: [ids] }]
//   LOADGATE_ACTIONS         JSON { "SwitchChannel": 6.5219, ... } relative frequencies
//   LOADGATE_IDLE_MIN_MS, LOADGATE_IDLE_AVG_MS, LOADGATE_IDLE_RATE   idle between actions
//   LOADGATE_MAX_USERS, LOADGATE_INITIAL_USERS   externally-controlled maxVUs / vus
//   LOADGATE_DURATION        hard stop for the executor, e.g. "6h" (safety net only)
//   LOADGATE_REQUEST_TIMEOUT_MS   per-request timeout, counted as a client timeout
//   LOADGATE_SEARCH_TERMS    optional comma-separated words for SearchPosts
//   LOADGATE_WORKLOAD_SEED   optional: the same seed gives every VU the same sequence of
//                            actions and idle times (lib/workload-random.js)
//
// Ceiling-test actions (src/chat-servers/mattermost/defaults.ts) mapped to Matrix:
//
// | Action                     | Matrix client-server requests                                     |
// |----------------------------|-------------------------------------------------------------------|
// | SwitchChannel              | GET rooms/{id}/messages?dir=b&limit=30, POST rooms/{id}/read_markers |
// | ScrollChannel              | GET rooms/{id}/messages?dir=b&limit=30&from={end of last page}    |
// | UnreadCheck                | GET sync?since={token}&timeout=0 (incremental, token kept per VU) |
// | CreatePost                 | PUT rooms/{id}/send/m.room.message/{txn}; 20% as a thread reply   |
// | OpenDirectOrGroupChannel   | as SwitchChannel, on one of the user's direct rooms               |
// | ViewGlobalThreads          | GET v1 rooms/{id}/threads?limit=25                                |
// | UpdateThreadRead           | POST rooms/{id}/receipt/m.read/{event} with thread_id             |
// | ClickPermalink             | GET rooms/{id}/context/{event}?limit=10                           |
// | ViewThread                 | GET v1 rooms/{id}/relations/{root}/m.thread?limit=30              |
// | ReconnectWebSocket         | GET sync?since={token}&timeout=0&set_presence=online (sync restart) |
// | AddReaction                | PUT rooms/{id}/send/m.reaction/{txn} (m.annotation)               |
// | EditPost                   | PUT rooms/{id}/send/m.room.message/{txn} (m.replace of own post)  |
// | SearchUsers                | POST user_directory/search                                        |
// | ClickUserProfile           | GET profile/{userId}                                              |
// | SearchPosts                | POST search (room_events, full text)                              |
// | SearchGroupChannels        | GET joined_rooms                                                  |
// | SearchChannels             | POST publicRooms with a generic_search_term                       |
// | CreateDirectChannel        | POST createRoom (is_direct, trusted_private_chat, 1 invite)       |
// | JoinChannel                | POST join/{id} of a dataset room the user is not in               |
// | DeletePost                 | PUT rooms/{id}/redact/{own event}/{txn}                           |
// | UpdateSidebarCategory      | PUT user/{me}/rooms/{id}/tags/m.favourite                         |
// | CreateGroupChannel         | POST createRoom (private_chat, 2 invites)                         |
// | UpdateCustomStatus         | PUT presence/{me}/status with a status_msg                        |
// | RemoveCustomStatus         | PUT presence/{me}/status with an empty status_msg                 |
// | FullReload                 | GET sync with the client filter and no since (initial sync)       |
// | LogoutLogin                | POST logout, POST login, initial sync                             |
// | CreatePrivateChannel       | POST createRoom (private_chat)                                    |
// | CreateSidebarCategory      | PUT user/{me}/rooms/{id}/tags/u.{name}                            |
// | CreatePublicChannel        | POST createRoom (public_chat)                                      |
//
// Not mapped (no Matrix equivalent; their weight is dropped and setup() says so):
// FollowThread, UnfollowThread, CreatePostReminder, SwitchTeam, MarkAllThreadsInTeamAsRead,
// CreateAclPost, AckToPost, CreatePersistentNotificationPost, GenerateUserReport.
// Together they are 0.0066 of the ceiling table's total weight of 13.47.
//
// Users: VU n drives users[(n-1) % users.length]. A VU removed by the coordinator is
// interrupted mid-iteration; when it is added again it logs in anew, as a new user would.
// Per-VU state lives in module scope (each VU has its own JS runtime), keyed by __VU.

import http from 'k6/http';
import { sleep } from 'k6';
import { workloadRandom } from './lib/workload-random.js';
import { SharedArray } from 'k6/data';
import { Counter } from 'k6/metrics';
import { recordResponse, countAction, declareAction, touchMetrics } from './lib/metrics.js';

const API = '/_matrix/client/v3';
const API_V1 = '/_matrix/client/v1';

// ---------- configuration (validated in init; setup() reports what is missing) ----------

const env = __ENV;
const problems = [];

function intEnv(name, fallback, min) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`);
  }
  return value;
}

function numberEnv(name, fallback) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!(value > 0) || !Number.isFinite(value)) throw new Error(`${name} must be a number > 0, got "${raw}"`);
  return value;
}

const BASE_URL = (env.LOADGATE_BASE_URL || '').replace(/\/+$/, '');
if (!BASE_URL) problems.push('LOADGATE_BASE_URL is not set');
else if (!/^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(:\d+)?$/.test(BASE_URL)) {
  throw new Error(`LOADGATE_BASE_URL must be a loopback http URL such as http://127.0.0.1:8080, got "${BASE_URL}"`);
}

const MAX_USERS = intEnv('LOADGATE_MAX_USERS', 1, 1);
const INITIAL_USERS = intEnv('LOADGATE_INITIAL_USERS', 0, 0);
if (INITIAL_USERS > MAX_USERS) throw new Error('LOADGATE_INITIAL_USERS must not exceed LOADGATE_MAX_USERS');
const DURATION = env.LOADGATE_DURATION || '6h';
if (!/^\d+[smh]$/.test(DURATION)) throw new Error(`LOADGATE_DURATION must look like "90s", "30m" or "6h", got "${DURATION}"`);
const IDLE_MIN_MS = intEnv('LOADGATE_IDLE_MIN_MS', 1000, 0);
const IDLE_AVG_MS = intEnv('LOADGATE_IDLE_AVG_MS', 20000, 1);
const IDLE_RATE = numberEnv('LOADGATE_IDLE_RATE', 1);
const REQUEST_TIMEOUT_MS = intEnv('LOADGATE_REQUEST_TIMEOUT_MS', 10000, 1);
const SEARCH_TERMS = (env.LOADGATE_SEARCH_TERMS || 'the,meeting,release,today,thanks,review,update,please,issue,deploy')
  .split(',')
  .map((w) => w.trim())
  .filter(Boolean);

// open() only works in the init context; SharedArray parses the file once for all VUs.
const users = new SharedArray('loadgate-users', () => {
  if (!env.LOADGATE_USERS_FILE) return [];
  const parsed = JSON.parse(open(env.LOADGATE_USERS_FILE));
  if (!Array.isArray(parsed)) throw new Error(`${env.LOADGATE_USERS_FILE}: expected a JSON array of users`);
  parsed.forEach((u, i) => {
    const ok =
      u && typeof u.user_id === 'string' && typeof u.localpart === 'string' && typeof u.password === 'string' && Array.isArray(u.rooms) && Array.isArray(u.dms);
    if (!ok) throw new Error(`${env.LOADGATE_USERS_FILE}[${i}]: expected { user_id, localpart, password, rooms: [], dms: [] }`);
  });
  return parsed;
});
if (!env.LOADGATE_USERS_FILE) problems.push('LOADGATE_USERS_FILE is not set');

// ---------- actions ----------

const ACTIONS = {
  SwitchChannel: (s) => openRoom(s, pick(s.user.rooms) || pick(s.user.dms)),
  ScrollChannel: scrollChannel,
  UnreadCheck: (s) => incrementalSync(s, false),
  CreatePost: (s) => createPost(s),
  OpenDirectOrGroupChannel: (s) => openRoom(s, pick(s.user.dms) || pick(s.user.rooms)),
  ViewGlobalThreads: viewGlobalThreads,
  UpdateThreadRead: updateThreadRead,
  ClickPermalink: clickPermalink,
  ViewThread: viewThread,
  ReconnectWebSocket: (s) => incrementalSync(s, true),
  AddReaction: addReaction,
  EditPost: editPost,
  SearchUsers: searchUsers,
  ClickUserProfile: clickUserProfile,
  SearchPosts: searchPosts,
  SearchGroupChannels: (s) => call(s, 'GET', `${API}/joined_rooms`, null, 'GET joined_rooms'),
  SearchChannels: searchChannels,
  CreateDirectChannel: (s) => createRoom(s, 'trusted_private_chat', 1, true),
  JoinChannel: joinChannel,
  DeletePost: deletePost,
  UpdateSidebarCategory: (s) => tagRoom(s, 'm.favourite'),
  CreateGroupChannel: (s) => createRoom(s, 'private_chat', 2, false),
  UpdateCustomStatus: (s) => setStatus(s, pick(['In a meeting', 'Working remotely', 'Lunch', 'Focus time'])),
  RemoveCustomStatus: (s) => setStatus(s, ''),
  FullReload: (s) => initialSync(s),
  LogoutLogin: logoutLogin,
  CreatePrivateChannel: (s) => createRoom(s, 'private_chat', 0, false),
  CreateSidebarCategory: (s) => tagRoom(s, `u.loadgate${randomInt(100)}`),
  CreatePublicChannel: (s) => createRoom(s, 'public_chat', 0, false),
};
const UNMAPPED = [
  'FollowThread',
  'UnfollowThread',
  'CreatePostReminder',
  'SwitchTeam',
  'MarkAllThreadsInTeamAsRead',
  'CreateAclPost',
  'AckToPost',
  'CreatePersistentNotificationPost',
  'GenerateUserReport',
];

// Cumulative weights for picking an action by relative frequency.
const actionTable = [];
let actionWeight = 0;
const ignoredActions = [];
if (env.LOADGATE_ACTIONS) {
  let frequencies;
  try {
    frequencies = JSON.parse(env.LOADGATE_ACTIONS);
  } catch (e) {
    throw new Error(`LOADGATE_ACTIONS is not valid JSON: ${e}`);
  }
  for (const name of Object.keys(frequencies)) {
    const weight = frequencies[name];
    if (typeof weight !== 'number' || !(weight >= 0)) throw new Error(`LOADGATE_ACTIONS.${name} must be a number >= 0`);
    if (UNMAPPED.indexOf(name) !== -1) {
      if (weight > 0) ignoredActions.push(name);
      continue;
    }
    if (!ACTIONS[name]) {
      throw new Error(`LOADGATE_ACTIONS: unknown action "${name}"; known: ${Object.keys(ACTIONS).join(', ')}`);
    }
    if (weight === 0) continue;
    declareAction(name);
    actionWeight += weight;
    actionTable.push({ name, upTo: actionWeight });
  }
  if (actionWeight === 0) problems.push('LOADGATE_ACTIONS gives no mapped action a weight > 0');
} else {
  problems.push('LOADGATE_ACTIONS is not set');
}
declareAction('Login');

const scriptErrors = new Counter('loadgate_script_errors');

export const options = {
  scenarios: {
    users: {
      executor: 'externally-controlled',
      vus: INITIAL_USERS,
      maxVUs: MAX_USERS,
      duration: DURATION,
    },
  },
  // Bodies are only kept for the requests that ask for them (responseType: 'text').
  discardResponseBodies: true,
  // Few tags: room and event ids in URLs would otherwise make a time series per URL.
  systemTags: ['status', 'method', 'name', 'error_code', 'scenario', 'expected_response'],
  userAgent: 'loadgate-k6 (matrix scenario)',
  setupTimeout: '60s',
};

export function setup() {
  if (problems.length) throw new Error(`matrix scenario: ${problems.join('; ')}`);
  if (users.length === 0) throw new Error(`${env.LOADGATE_USERS_FILE}: the users file is empty`);
  if (ignoredActions.length) {
    console.warn(`matrix scenario: no Matrix equivalent for ${ignoredActions.join(', ')}; their weight is ignored`);
  }
  touchMetrics();
}

// ---------- per-VU state ----------

const sessions = {};

function session() {
  let s = sessions[__VU];
  if (!s) {
    const user = users[(__VU - 1) % users.length];
    s = {
      user: { user_id: user.user_id, localpart: user.localpart, password: user.password, rooms: user.rooms.slice(), dms: user.dms.slice() },
      token: null,
      since: null,
      txn: 0,
      busy: false,
      room: null, // the room last opened, for ScrollChannel
      scrollFrom: null, // pagination token of that room
      events: {}, // room id -> recent m.room.message event ids seen
      threads: [], // { room, root, reply? } seen
      own: [], // { room, id } messages this user sent, for edit and delete
      reacted: {}, // "event|key" already sent, to avoid duplicate annotations
      reactedCount: 0,
      loggedErrors: 0,
    };
    sessions[__VU] = s;
  }
  return s;
}

function resetSession(s) {
  s.token = null;
  s.since = null;
  s.room = null;
  s.scrollFrom = null;
}

export default function () {
  const s = session();
  // busy is still set when the previous iteration was cut off: the coordinator removed
  // this user and has now added it back, so it starts a new session.
  if (s.busy) resetSession(s);
  s.busy = true;
  try {
    if (!s.token) {
      countAction('Login');
      if (login(s)) initialSync(s);
    } else {
      const action = pickAction();
      countAction(action);
      ACTIONS[action](s);
    }
  } catch (e) {
    scriptErrors.add(1);
    if (s.loggedErrors++ < 3) console.error(`VU ${__VU} (${s.user.localpart}): ${e}`);
  }
  sleep(idleSeconds());
  s.busy = false;
}

// This VU's draws of its next action and idle time; created on first use, when __VU is set.
let workloadDraws;
function workloadDraw() {
  if (!workloadDraws) workloadDraws = workloadRandom(__ENV.LOADGATE_WORKLOAD_SEED, __VU);
  return workloadDraws();
}

// load-test-ng's PickIdleTimeMs: uniform in [min, 2*avg - min), scaled by the rate.
function idleSeconds() {
  const span = 2 * (IDLE_AVG_MS - IDLE_MIN_MS);
  const ms = span > 0 ? IDLE_MIN_MS + Math.floor(workloadDraw() * span) : IDLE_MIN_MS;
  return (ms * IDLE_RATE) / 1000;
}

function pickAction() {
  const r = workloadDraw() * actionWeight;
  for (const entry of actionTable) if (r < entry.upTo) return entry.name;
  return actionTable[actionTable.length - 1].name;
}

// ---------- HTTP ----------

/** One request, recorded for the exporter. Returns the response, or null if cancelled. */
function call(s, method, path, body, name, keepBody) {
  const params = {
    headers: { 'Content-Type': 'application/json' },
    timeout: REQUEST_TIMEOUT_MS,
    tags: { name },
    responseType: keepBody ? 'text' : 'none',
  };
  if (s.token) params.headers.Authorization = `Bearer ${s.token}`;
  const started = Date.now();
  const res = http.request(method, BASE_URL + path, body === null ? null : JSON.stringify(body), params);
  const outcome = recordResponse(res, Date.now() - started);
  if (outcome === 'cancelled') return null;
  if (res.status === 401 && s.token) s.token = null; // token gone (logged out, expired): log in again
  return res;
}

function ok(res) {
  return res !== null && res.status >= 200 && res.status < 300;
}

function json(res, selector) {
  try {
    return res.json(selector);
  } catch (e) {
    return undefined;
  }
}

const enc = encodeURIComponent;
const SYNC_FILTER = enc(JSON.stringify({ room: { timeline: { limit: 10 }, state: { lazy_load_members: true } } }));
const MESSAGES_FILTER = enc(JSON.stringify({ lazy_load_members: true }));

function nextTxn(s) {
  s.txn += 1;
  return `lg${__VU}.${Date.now().toString(36)}.${s.txn}`;
}

function pick(list) {
  return list && list.length ? list[Math.floor(Math.random() * list.length)] : undefined;
}

function randomInt(n) {
  return Math.floor(Math.random() * n);
}

function remember(list, item, cap) {
  list.push(item);
  if (list.length > cap) list.splice(0, list.length - cap);
}

// ---------- session ----------

function login(s) {
  const res = call(
    s,
    'POST',
    `${API}/login`,
    {
      type: 'm.login.password',
      identifier: { type: 'm.id.user', user: s.user.localpart },
      password: s.user.password,
      initial_device_display_name: `loadgate k6 VU ${__VU}`,
    },
    'POST login',
    true,
  );
  if (!ok(res)) {
    if (res && s.loggedErrors++ < 3) console.error(`VU ${__VU}: login of ${s.user.localpart} failed with HTTP ${res.status}`);
    return false;
  }
  const token = json(res, 'access_token');
  if (typeof token !== 'string') return false;
  s.token = token;
  return true;
}

function initialSync(s) {
  const res = call(s, 'GET', `${API}/sync?filter=${SYNC_FILTER}&timeout=0`, null, 'GET sync (initial)', true);
  if (ok(res)) s.since = json(res, 'next_batch') || null;
}

function incrementalSync(s, reconnect) {
  if (!s.since) return initialSync(s);
  const presence = reconnect ? '&set_presence=online' : '';
  const res = call(s, 'GET', `${API}/sync?filter=${SYNC_FILTER}&timeout=0&since=${enc(s.since)}${presence}`, null, 'GET sync', true);
  if (ok(res)) s.since = json(res, 'next_batch') || s.since;
}

function logoutLogin(s) {
  call(s, 'POST', `${API}/logout`, {}, 'POST logout', false);
  resetSession(s);
  if (login(s)) initialSync(s);
}

// ---------- rooms and messages ----------

function loadMessages(s, room, from) {
  const fromParam = from ? `&from=${enc(from)}` : '';
  const res = call(
    s,
    'GET',
    `${API}/rooms/${enc(room)}/messages?dir=b&limit=30&filter=${MESSAGES_FILTER}${fromParam}`,
    null,
    from ? 'GET rooms/messages (scroll)' : 'GET rooms/messages',
    true,
  );
  if (!ok(res)) return [];
  s.room = room;
  s.scrollFrom = json(res, 'end') || null;
  const ids = json(res, 'chunk.#(type=="m.room.message")#.event_id') || [];
  const known = s.events[room] || (s.events[room] = []);
  for (const id of ids) remember(known, id, 60);
  const roots = json(res, 'chunk.#(content.m\\.relates_to.rel_type=="m.thread")#.content.m\\.relates_to.event_id') || [];
  const rootsWithReplies = json(res, 'chunk.#(unsigned.m\\.relations.m\\.thread.count>0)#.event_id') || [];
  for (const root of roots.concat(rootsWithReplies)) {
    if (!s.threads.some((t) => t.root === root)) remember(s.threads, { room, root, reply: null }, 40);
  }
  return ids;
}

function openRoom(s, room) {
  if (!room) return;
  const ids = loadMessages(s, room, null);
  const latest = ids[0]; // dir=b: newest first
  if (latest) {
    call(s, 'POST', `${API}/rooms/${enc(room)}/read_markers`, { 'm.fully_read': latest, 'm.read': latest }, 'POST rooms/read_markers', false);
  }
}

function scrollChannel(s) {
  if (!s.room || !s.scrollFrom) return openRoom(s, pick(s.user.rooms) || pick(s.user.dms));
  loadMessages(s, s.room, s.scrollFrom);
}

/** A room with at least one known message, loading one if the VU has seen none yet. */
function roomWithEvents(s) {
  const rooms = Object.keys(s.events).filter((r) => s.events[r].length);
  if (rooms.length) return pick(rooms);
  const room = pick(s.user.rooms) || pick(s.user.dms);
  if (!room) return undefined;
  loadMessages(s, room, null);
  return s.events[room] && s.events[room].length ? room : undefined;
}

function sendEvent(s, room, type, content, name) {
  const res = call(s, 'PUT', `${API}/rooms/${enc(room)}/send/${type}/${nextTxn(s)}`, content, name, true);
  return ok(res) ? json(res, 'event_id') : undefined;
}

function createPost(s) {
  const thread = Math.random() < 0.2 ? pick(s.threads) : undefined;
  const room = thread ? thread.room : s.room || pick(s.user.rooms) || pick(s.user.dms);
  if (!room) return undefined;
  const content = { msgtype: 'm.text', body: `${pick(SEARCH_TERMS)} message ${s.txn} from VU ${__VU}` };
  if (thread) {
    content['m.relates_to'] = { rel_type: 'm.thread', event_id: thread.root, is_falling_back: true, 'm.in_reply_to': { event_id: thread.root } };
  }
  const id = sendEvent(s, room, 'm.room.message', content, thread ? 'PUT send m.room.message (thread)' : 'PUT send m.room.message');
  if (id) {
    remember(s.own, { room, id }, 30);
    if (thread) thread.reply = id;
  }
  return id ? { room, id } : undefined;
}

function editPost(s) {
  const post = pick(s.own) || createPost(s);
  if (!post) return;
  const body = `edited ${pick(SEARCH_TERMS)} ${s.txn}`;
  sendEvent(
    s,
    post.room,
    'm.room.message',
    {
      msgtype: 'm.text',
      body: `* ${body}`,
      'm.new_content': { msgtype: 'm.text', body },
      'm.relates_to': { rel_type: 'm.replace', event_id: post.id },
    },
    'PUT send m.room.message (edit)',
  );
}

function deletePost(s) {
  const post = s.own.length ? s.own.pop() : createPost(s) && s.own.pop();
  if (!post) return;
  call(s, 'PUT', `${API}/rooms/${enc(post.room)}/redact/${enc(post.id)}/${nextTxn(s)}`, { reason: 'loadgate' }, 'PUT rooms/redact', false);
}

const REACTION_KEYS = ['👍', '❤️', '😂', '🎉', '👀', '🙏', '🔥', '✅', '😮', '🚀', '💯', '👏'];

function addReaction(s) {
  const room = roomWithEvents(s);
  if (!room) return;
  const event = pick(s.events[room]);
  // The same user may not send the same annotation twice: pick a key not used yet.
  const keys = REACTION_KEYS.filter((k) => !s.reacted[`${event}|${k}`]);
  if (!keys.length) return;
  const key = pick(keys);
  if (s.reactedCount++ > 2000) {
    s.reacted = {};
    s.reactedCount = 0;
  }
  s.reacted[`${event}|${key}`] = true;
  sendEvent(s, room, 'm.reaction', { 'm.relates_to': { rel_type: 'm.annotation', event_id: event, key } }, 'PUT send m.reaction');
}

function clickPermalink(s) {
  const room = roomWithEvents(s);
  if (!room) return;
  call(s, 'GET', `${API}/rooms/${enc(room)}/context/${enc(pick(s.events[room]))}?limit=10`, null, 'GET rooms/context', false);
}

// ---------- threads ----------

function someThread(s) {
  if (s.threads.length) return pick(s.threads);
  const room = roomWithEvents(s);
  if (s.threads.length) return pick(s.threads);
  // No thread seen yet: any message can be asked for its thread (the answer is empty).
  return room ? { room, root: pick(s.events[room]), reply: null } : undefined;
}

function viewThread(s) {
  const thread = someThread(s);
  if (!thread) return;
  const res = call(s, 'GET', `${API_V1}/rooms/${enc(thread.room)}/relations/${enc(thread.root)}/m.thread?limit=30`, null, 'GET rooms/relations m.thread', true);
  if (ok(res)) {
    const latest = json(res, 'chunk.0.event_id');
    if (typeof latest === 'string') thread.reply = latest;
  }
}

function viewGlobalThreads(s) {
  const room = s.room || pick(s.user.rooms);
  if (!room) return;
  call(s, 'GET', `${API_V1}/rooms/${enc(room)}/threads?limit=25`, null, 'GET rooms/threads', false);
}

function updateThreadRead(s) {
  const thread = someThread(s);
  if (!thread) return;
  // A threaded receipt names an event inside the thread; without a known reply, the
  // root is read on the main timeline.
  const [event, threadId] = thread.reply ? [thread.reply, thread.root] : [thread.root, 'main'];
  call(s, 'POST', `${API}/rooms/${enc(thread.room)}/receipt/m.read/${enc(event)}`, { thread_id: threadId }, 'POST rooms/receipt', false);
}

// ---------- people, search, rooms ----------

function otherUser(s) {
  for (let i = 0; i < 5; i++) {
    const u = users[randomInt(users.length)];
    if (u.user_id !== s.user.user_id) return u;
  }
  return undefined;
}

function searchUsers(s) {
  const u = otherUser(s) || s.user;
  call(s, 'POST', `${API}/user_directory/search`, { search_term: u.localpart.slice(0, 4), limit: 10 }, 'POST user_directory/search', false);
}

function clickUserProfile(s) {
  const u = otherUser(s) || s.user;
  call(s, 'GET', `${API}/profile/${enc(u.user_id)}`, null, 'GET profile', false);
}

function searchPosts(s) {
  call(
    s,
    'POST',
    `${API}/search`,
    { search_categories: { room_events: { search_term: pick(SEARCH_TERMS), order_by: 'recent', filter: { limit: 10 } } } },
    'POST search',
    false,
  );
}

function searchChannels(s) {
  call(s, 'POST', `${API}/publicRooms`, { limit: 20, filter: { generic_search_term: pick(SEARCH_TERMS) } }, 'POST publicRooms', false);
}

let allRooms = null;

function joinChannel(s) {
  if (allRooms === null) {
    const seen = {};
    for (let i = 0; i < users.length; i++) for (const r of users[i].rooms) seen[r] = true;
    allRooms = Object.keys(seen);
  }
  const candidates = allRooms.filter((r) => s.user.rooms.indexOf(r) === -1);
  const room = pick(candidates);
  if (!room) return;
  const res = call(s, 'POST', `${API}/join/${enc(room)}`, {}, 'POST join', false);
  if (ok(res)) s.user.rooms.push(room);
}

function createRoom(s, preset, invites, isDirect) {
  const invite = [];
  for (let i = 0; i < invites; i++) {
    const u = otherUser(s);
    if (u && invite.indexOf(u.user_id) === -1) invite.push(u.user_id);
  }
  const body = { preset, invite, is_direct: isDirect };
  if (!isDirect) body.name = `loadgate ${preset} ${__VU}.${s.txn}`;
  const res = call(s, 'POST', `${API}/createRoom`, body, `POST createRoom (${preset})`, true);
  const room = ok(res) ? json(res, 'room_id') : undefined;
  if (typeof room === 'string') (isDirect ? s.user.dms : s.user.rooms).push(room);
}

function tagRoom(s, tag) {
  const room = pick(s.user.rooms) || pick(s.user.dms);
  if (!room) return;
  call(s, 'PUT', `${API}/user/${enc(s.user.user_id)}/rooms/${enc(room)}/tags/${enc(tag)}`, { order: Math.random() }, 'PUT user/rooms/tags', false);
}

function setStatus(s, message) {
  call(s, 'PUT', `${API}/presence/${enc(s.user.user_id)}/status`, { presence: 'online', status_msg: message }, 'PUT presence/status', false);
}
