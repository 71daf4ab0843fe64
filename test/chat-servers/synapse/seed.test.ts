import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { MatrixClient, registrationMac, runPool } from '../../../src/chat-servers/synapse/client.ts';
import { seedDataset, datasetUserSchema, SEED_CONCURRENCY } from '../../../src/chat-servers/synapse/dataset.ts';
import { seededRandom } from '../../../src/util/random.ts';
import { planDataset } from '../../../src/chat-servers/synapse/dataset-plan.ts';

/** A fake homeserver behind `fetch`: checks the shared-secret MAC and records every call. */
function fakeHomeserver(secret: string) {
  const calls: Array<{ method: string; path: string; body: Record<string, unknown> | undefined; token: string | undefined; made?: string }> = [];
  const members = new Map<string, Set<string>>();
  const tokens = new Map<string, string>();
  let n = 0;
  const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  const fetchImpl = async (url: string, init?: RequestInit): Promise<Response> => {
    const { pathname } = new URL(url);
    const method = init?.method ?? 'GET';
    const body = init?.body ? (JSON.parse(String(init.body)) as Record<string, unknown>) : undefined;
    const token = (init?.headers as Record<string, string> | undefined)?.authorization?.replace('Bearer ', '');
    const call: (typeof calls)[number] = { method, path: pathname, body, token };
    calls.push(call);
    if (pathname === '/_synapse/admin/v1/register') {
      if (method === 'GET') return json(200, { nonce: `nonce${n++}` });
      const b = body as { nonce: string; username: string; password: string; admin: boolean; mac: string };
      const expected = createHmac('sha1', secret).update(`${b.nonce}\0${b.username}\0${b.password}\0notadmin`).digest('hex');
      if (b.mac !== expected) return json(403, { errcode: 'M_FORBIDDEN', error: 'HMAC incorrect' });
      const userId = `@${b.username}:loadgate.local`;
      tokens.set(`tok-${b.username}`, userId);
      return json(200, { user_id: userId, access_token: `tok-${b.username}` });
    }
    const user = token ? tokens.get(token) : undefined;
    if (!user) return json(401, { errcode: 'M_UNKNOWN_TOKEN' });
    if (pathname === '/_matrix/client/v3/createRoom') {
      const roomId = `!room${n++}:loadgate.local`;
      call.made = roomId;
      members.set(roomId, new Set([user]));
      return json(200, { room_id: roomId });
    }
    const join = /^\/_matrix\/client\/v3\/join\/(.+)$/.exec(pathname);
    if (join) {
      const roomId = decodeURIComponent(join[1]!);
      members.get(roomId)!.add(user);
      return json(200, { room_id: roomId });
    }
    const send = /^\/_matrix\/client\/v3\/rooms\/([^/]+)\/send\//.exec(pathname);
    if (send) {
      if (!members.get(decodeURIComponent(send[1]!))?.has(user)) return json(403, { errcode: 'M_FORBIDDEN', error: 'not in room' });
      call.made = `$ev${n++}`;
      return json(200, { event_id: call.made });
    }
    if (/account_data\/m\.direct$/.test(pathname)) return json(200, {});
    return json(404, { errcode: 'M_UNRECOGNIZED' });
  };
  return { fetchImpl, calls, members };
}

test('seeding sends exactly the planned requests and writes a users file the scenario can use', async () => {
  const size = { users: 12, rooms: 3, membersPerRoom: 5, directRooms: 3, messagesPerRoom: 10, threadRatio: 0.2, reactionRatio: 0.2 };
  const plan = planDataset(size);
  const hs = fakeHomeserver('s3cret');
  const users = await seedDataset(new MatrixClient('http://127.0.0.1:1', hs.fetchImpl), 's3cret', plan);
  assert.equal(hs.calls.length, plan.requestCount);
  assert.equal(users.length, 12);
  for (const u of users) datasetUserSchema.parse(u);
  // Every room a user lists really has the user as a member, and the lists are complete.
  for (const [roomId, set] of hs.members) {
    for (const u of users) assert.equal(set.has(u.user_id), u.rooms.includes(roomId) || u.dms.includes(roomId), `${u.user_id} ${roomId}`);
  }
  assert.equal(new Set(users.flatMap((u) => u.dms)).size, 3);
  const threads = hs.calls.filter((c) => (c.body?.['m.relates_to'] as { rel_type?: string } | undefined)?.rel_type === 'm.thread');
  const reactions = hs.calls.filter((c) => (c.body?.['m.relates_to'] as { rel_type?: string } | undefined)?.rel_type === 'm.annotation');
  assert.equal(
    threads.length,
    plan.rooms.reduce((n, r) => n + r.messages.filter((m) => m.threadRoot !== undefined).length, 0),
  );
  assert.equal(
    reactions.length,
    plan.rooms.reduce((n, r) => n + r.reactions.length, 0),
  );
});

test("a wrong shared secret fails with the server's error", async () => {
  const hs = fakeHomeserver('right');
  const client = new MatrixClient('http://127.0.0.1:1', hs.fetchImpl);
  await assert.rejects(client.registerWithSharedSecret('wrong', 'u1', 'pw'), /HTTP 403 M_FORBIDDEN: HMAC incorrect/);
  assert.equal(registrationMac('k', 'n', 'u', 'p', true), createHmac('sha1', 'k').update('n\0u\0p\0admin').digest('hex'));
});

test('runPool bounds concurrency and stops at the first failure', async () => {
  let inFlight = 0;
  let peak = 0;
  const done: number[] = [];
  await runPool([1, 2, 3, 4, 5, 6, 7], 3, async (x) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await new Promise((r) => setTimeout(r, 5));
    inFlight--;
    done.push(x);
  });
  assert.equal(peak, 3);
  assert.equal(done.length, 7);
  const started: number[] = [];
  await assert.rejects(
    runPool([1, 2, 3, 4, 5, 6], 1, async (x) => {
      started.push(x);
      if (x === 2) throw new Error('boom');
    }),
    /boom/,
  );
  assert.deepEqual(started, [1, 2]);
});

/**
 * What a seeded dataset holds, whatever the ids the server made: each room by its
 * creation request, its members, its events in order (an event id replaced by the room's
 * event number), and the users file with room ids replaced the same way.
 */
function logical(hs: ReturnType<typeof fakeHomeserver>, users: unknown[]): unknown {
  const roomKey = new Map<string, string>();
  const events = new Map<string, string>();
  const perRoom = new Map<string, unknown[]>();
  for (const c of hs.calls) {
    if (c.path === '/_matrix/client/v3/createRoom' && c.made) roomKey.set(c.made, JSON.stringify({ by: c.token, ...c.body }));
  }
  const name = (id: string) => roomKey.get(id) ?? events.get(id) ?? id;
  const swap = (value: unknown): unknown => JSON.parse(JSON.stringify(value), (_k, v: unknown) => (typeof v === 'string' ? name(v) : v));
  for (const c of hs.calls) {
    const room = /rooms\/([^/]+)\/send\/([^/]+)\//.exec(c.path) ?? /join\/(.+)$/.exec(c.path);
    if (!room) continue;
    const id = decodeURIComponent(room[1] as string);
    const list = perRoom.get(name(id)) ?? [];
    list.push({ by: c.token, type: room[2] ?? 'join', body: swap(c.body) });
    if (c.made) events.set(c.made, `${name(id)}#${list.length}`);
    perRoom.set(name(id), list);
  }
  const direct = hs.calls
    .filter((c) => c.path.endsWith('/m.direct'))
    .map((c) => JSON.stringify({ by: c.token, body: swap(c.body) }))
    .sort();
  const members = [...hs.members].map(([id, set]) => `${name(id)} ${[...set].sort().join(',')}`).sort();
  return { rooms: [...perRoom].sort(([a], [b]) => (a < b ? -1 : 1)), members, direct, users: swap(users) };
}

test('seeding many rooms at once builds the same dataset as one request at a time', async () => {
  const size = { users: 30, rooms: 8, membersPerRoom: 6, directRooms: 8, messagesPerRoom: 12, threadRatio: 0.25, reactionRatio: 0.25 };
  const plan = planDataset(size);
  const build = async (concurrency: number) => {
    const hs = fakeHomeserver('s3cret');
    // Answers come back in an order of their own, as a busy server's do.
    const rand = seededRandom(concurrency);
    const slow = async (url: string, init?: RequestInit) => {
      await new Promise((r) => setTimeout(r, Math.floor(rand() * 3)));
      return hs.fetchImpl(url, init);
    };
    const users = await seedDataset(new MatrixClient('http://127.0.0.1:1', slow), 's3cret', plan, undefined, concurrency);
    return { hs, users };
  };
  const one = await build(1);
  const many = await build(SEED_CONCURRENCY);
  assert.ok(SEED_CONCURRENCY > 1);
  assert.equal(many.hs.calls.length, plan.requestCount);
  assert.deepEqual(logical(many.hs, many.users), logical(one.hs, one.users));
});
