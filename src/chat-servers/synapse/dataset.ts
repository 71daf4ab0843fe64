import { createHash, randomBytes } from 'node:crypto';
import { copyFile, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import type { ProcessSupervisor } from '../../util/process.ts';
import { DATABASE_NAME, SERVER_NAME } from './config.ts';
import { MatrixClient, runPool } from './client.ts';
import { planDataset, type DatasetPlan, type DatasetSize, type PlannedRoom, type PlannedUser } from './dataset-plan.ts';
import type { SynapseInstall } from './install.ts';
import type { LocalDataset, LocalHost, Override } from '../chat-server.ts';
import { generateSigningKey, startSynapse } from './server.ts';

/**
 * The seeded dataset: built once per dataset size (and Synapse version, and password
 * hashing cost) through Synapse's own APIs, then kept as a `pg_dump -Fc` in the cache
 * with the users file the k6 scenario reads and the server's signing key. Before every
 * run the dump is restored into a fresh database, so both versions start from identical
 * data. It is built with the OLDER of the two versions: Synapse migrates a schema
 * forward on start, never backward.
 */
const DATASET_FORMAT = 1;

export interface DatasetArtifacts extends LocalDataset {
  dir: string;
  dumpFile: string;
  usersFile: string;
  signingKeyFile: string;
  meta: DatasetMeta;
}

const metaSchema = z.strictObject({
  format: z.literal(DATASET_FORMAT),
  key: z.string(),
  size: z.strictObject({
    users: z.number(),
    rooms: z.number(),
    membersPerRoom: z.number(),
    directRooms: z.number(),
    messagesPerRoom: z.number(),
    threadRatio: z.number(),
    reactionRatio: z.number(),
  }),
  builtWith: z.string(),
  serverName: z.string(),
  builtAt: z.string(),
  buildSeconds: z.number(),
  counts: z.strictObject({
    users: z.number(),
    rooms: z.number(),
    directRooms: z.number(),
    messages: z.number(),
    threadReplies: z.number(),
    reactions: z.number(),
    requests: z.number(),
  }),
});
export type DatasetMeta = z.output<typeof metaSchema>;

/** One line of the users file, as the k6 scenario expects it. */
export const datasetUserSchema = z.strictObject({
  user_id: z.string(),
  localpart: z.string(),
  password: z.string(),
  rooms: z.array(z.string()),
  dms: z.array(z.string()),
});
export type DatasetUser = z.output<typeof datasetUserSchema>;

/** Settings that change what the dump holds (stored password hashes) are part of the key. */
export function datasetKey(size: DatasetSize, builtWith: string, overrides: readonly Override[]): string {
  const hashing = overrides.filter((o) => o.path[0] === 'bcrypt_rounds' || o.path[0] === 'password_config').map((o) => o.text);
  const hash = createHash('sha256')
    .update(JSON.stringify({ f: DATASET_FORMAT, size, builtWith, hashing, SERVER_NAME }))
    .digest('hex')
    .slice(0, 10);
  return `u${size.users}-r${size.rooms}x${size.membersPerRoom}-d${size.directRooms}-m${size.messagesPerRoom}-synapse${builtWith}-${hash}`;
}

function datasetDir(cacheDir: string, key: string): string {
  return join(cacheDir, 'datasets', key);
}

function artifactsIn(dir: string, meta: DatasetMeta): DatasetArtifacts {
  return {
    dir,
    meta,
    dumpFile: join(dir, 'synapse.dump'),
    usersFile: join(dir, 'users.json'),
    signingKeyFile: join(dir, 'signing.key'),
    description: describeDataset(meta),
  };
}

/** The cached dataset for `key`, or undefined when it was never (completely) built. */
export async function findDataset(cacheDir: string, key: string): Promise<DatasetArtifacts | undefined> {
  const dir = datasetDir(cacheDir, key);
  try {
    const meta = metaSchema.parse(JSON.parse(await readFile(join(dir, 'dataset.json'), 'utf8')));
    return meta.key === key ? artifactsIn(dir, meta) : undefined;
  } catch {
    return undefined;
  }
}

export interface BuildDatasetOptions {
  supervisor: ProcessSupervisor;
  bench: LocalHost;
  install: SynapseInstall;
  cacheDir: string;
  size: DatasetSize;
  /** target.settings from the gate config (the same for both sides). */
  overrides: readonly Override[];
  /** Work dir for the seeding Synapse (config, media). */
  workDir: string;
  logFile: string;
  onProgress?: (message: string) => void;
}

/**
 * Requests in flight while seeding. Each room's own requests stay in order (its creation,
 * joins, messages with their thread roots, then reactions), so the data is the same at any
 * bound; many rooms at once let Synapse persist their events in batches.
 */
export const SEED_CONCURRENCY = 16;

/** Sends the plan to a running Synapse; returns the users file content. Bounded by plan.requestCount. */
export async function seedDataset(
  client: MatrixClient,
  sharedSecret: string,
  plan: DatasetPlan,
  onProgress?: (done: number, total: number) => void,
  concurrency = SEED_CONCURRENCY,
): Promise<DatasetUser[]> {
  const count = requestCounter(plan.requestCount, onProgress);
  const users = await registerUsers(client, sharedSecret, plan.users, concurrency, count);
  const roomIds: string[] = new Array(plan.rooms.length);
  await runPool(plan.rooms, concurrency, async (room, index) => {
    roomIds[index] = await seedRoom(client, room, users, count);
  });
  const { rooms, dms, direct } = membershipsOf(plan.rooms, roomIds, users.ids);
  // m.direct account data, so clients (and the scenario) see DMs as DMs.
  await runPool(plan.users, concurrency, async (_u, i) => {
    await client.setAccountData(users.tokens[i] as string, users.ids[i] as string, 'm.direct', direct.get(i) ?? {});
    count();
  });
  return plan.users.map((u, i) => ({
    user_id: users.ids[i] as string,
    localpart: u.localpart,
    password: u.password,
    rooms: rooms.get(i) ?? [],
    dms: dms.get(i) ?? [],
  }));
}

/** Counts one request (or n) as sent. */
type CountRequests = (n?: number) => void;

/** Reports progress on every request and stops a seeding that sends more requests than the plan holds. */
function requestCounter(planned: number, onProgress?: (done: number, total: number) => void): CountRequests {
  let sent = 0;
  return (n = 1) => {
    sent += n;
    if (sent > planned) throw new Error(`seeding sent more requests (${sent}) than planned (${planned})`);
    onProgress?.(sent, planned);
  };
}

/** The registered users' access tokens and user ids, by their index in the plan. */
interface SeededUsers {
  tokens: string[];
  ids: string[];
}

/** Registers every planned user with the shared secret (Synapse's admin registration API). */
async function registerUsers(
  client: MatrixClient,
  sharedSecret: string,
  users: readonly PlannedUser[],
  concurrency: number,
  count: CountRequests,
): Promise<SeededUsers> {
  const tokens: string[] = new Array(users.length);
  const ids: string[] = new Array(users.length);
  // Registration hashes each password (bcrypt) in Synapse's threadpool.
  await runPool(users, concurrency, async (u, i) => {
    const r = await client.registerWithSharedSecret(sharedSecret, u.localpart, u.password);
    count(2);
    tokens[i] = r.accessToken;
    ids[i] = r.userId;
  });
  return { tokens, ids };
}

/** Creates one room and sends its requests in order: joins, messages with their thread roots, then reactions. Returns its id. */
async function seedRoom(client: MatrixClient, room: PlannedRoom, users: SeededUsers, count: CountRequests): Promise<string> {
  const { tokens, ids } = users;
  const creatorToken = tokens[room.creator] as string;
  const body =
    room.kind === 'room'
      ? { preset: 'public_chat', name: room.name, topic: `Seeded by loadgate (${room.name})`, visibility: 'private' }
      : { preset: 'trusted_private_chat', is_direct: true, invite: room.joiners.map((j) => ids[j]) };
  const roomId = await client.createRoom(creatorToken, body);
  count();
  for (const j of room.joiners) {
    await client.join(tokens[j] as string, roomId);
    count();
  }
  const eventIds: string[] = [];
  for (const [i, m] of room.messages.entries()) {
    const content: Record<string, unknown> = { msgtype: 'm.text', body: `${room.name} message ${i + 1}: ${loremFor(i)}` };
    if (m.threadRoot !== undefined) {
      const root = eventIds[m.threadRoot] as string;
      content['m.relates_to'] = { rel_type: 'm.thread', event_id: root, is_falling_back: true, 'm.in_reply_to': { event_id: root } };
    }
    eventIds.push(await client.sendEvent(tokens[m.sender] as string, roomId, 'm.room.message', content));
    count();
  }
  for (const r of room.reactions) {
    await client.sendEvent(tokens[r.sender] as string, roomId, 'm.reaction', {
      'm.relates_to': { rel_type: 'm.annotation', event_id: eventIds[r.target], key: r.key },
    });
    count();
  }
  return roomId;
}

/** Per user (by plan index): its rooms, its DMs, and its m.direct content (the other user's id to their DM rooms). */
interface Memberships {
  rooms: Map<number, string[]>;
  dms: Map<number, string[]>;
  direct: Map<number, Record<string, string[]>>;
}

/** Each user's rooms in the plan's order, whichever finished first. */
function membershipsOf(planned: readonly PlannedRoom[], roomIds: readonly string[], ids: readonly string[]): Memberships {
  const rooms = new Map<number, string[]>();
  const dms = new Map<number, string[]>();
  const direct = new Map<number, Record<string, string[]>>();
  const add = (map: Map<number, string[]>, user: number, roomId: string) => map.set(user, [...(map.get(user) ?? []), roomId]);
  planned.forEach((room, index) => {
    const roomId = roomIds[index] as string;
    for (const member of [room.creator, ...room.joiners]) add(room.kind === 'room' ? rooms : dms, member, roomId);
    if (room.kind === 'dm') {
      const [a, b] = [room.creator, room.joiners[0] as number];
      for (const [me, other] of [
        [a, b],
        [b, a],
      ] as const) {
        const m = direct.get(me) ?? {};
        (m[ids[other] as string] ??= []).push(roomId);
        direct.set(me, m);
      }
    }
  });
  return { rooms, dms, direct };
}

/** Words the seeded messages are made of; the scenario's SearchPosts looks for them. */
export const SEARCH_WORDS = 'release candidate load gate latency room thread reaction search sync message baseline regression bench server chat'.split(' ');
function loremFor(i: number): string {
  return Array.from({ length: 6 + (i % 9) }, (_, k) => SEARCH_WORDS[(i * 7 + k * 3) % SEARCH_WORDS.length]).join(' ');
}

export async function buildDataset(o: BuildDatasetOptions): Promise<DatasetArtifacts> {
  const key = datasetKey(o.size, o.install.version, o.overrides);
  const finalDir = datasetDir(o.cacheDir, key);
  const buildDir = `${finalDir}.build-${process.pid}`;
  await rm(buildDir, { recursive: true, force: true });
  await mkdir(buildDir, { recursive: true });
  const started = Date.now();
  const plan = planDataset(o.size);
  const signingKeyFile = join(buildDir, 'signing.key');
  await generateSigningKey(o.install, signingKeyFile);
  await o.bench.postgres.recreateDatabase(DATABASE_NAME);
  const sharedSecret = randomBytes(24).toString('hex');
  const synapse = await startSynapse({
    supervisor: o.supervisor,
    install: o.install,
    dir: o.workDir,
    logFile: o.logFile,
    config: {
      clientPort: o.bench.ports.serverClient,
      metricsPort: o.bench.ports.serverMetrics,
      publicBaseUrl: o.bench.nginx.url,
      database: {
        host: o.bench.postgres.host,
        port: o.bench.postgres.port,
        user: o.bench.postgres.user,
        password: o.bench.postgres.password,
        name: DATABASE_NAME,
      },
      signingKeyPath: signingKeyFile,
      registrationSharedSecret: sharedSecret,
      overrides: o.overrides,
    },
  });
  let users: DatasetUser[];
  try {
    let last = 0;
    users = await seedDataset(new MatrixClient(synapse.clientUrl), sharedSecret, plan, (done, total) => {
      if (Date.now() - last > 5000) {
        last = Date.now();
        o.onProgress?.(`seeding dataset: ${done}/${total} requests`);
      }
    });
    if (!synapse.process.running) throw new Error(synapse.process.describeExit());
  } finally {
    await synapse.stop();
  }
  await o.bench.postgres.dump(DATABASE_NAME, join(buildDir, 'synapse.dump'));
  await writeFile(join(buildDir, 'users.json'), `${JSON.stringify(users, null, 1)}\n`);
  const messages = plan.rooms.reduce((n, r) => n + r.messages.length, 0);
  const meta: DatasetMeta = {
    format: DATASET_FORMAT,
    key,
    size: o.size,
    builtWith: o.install.version,
    serverName: SERVER_NAME,
    builtAt: new Date().toISOString(),
    buildSeconds: Math.round((Date.now() - started) / 1000),
    counts: {
      users: plan.users.length,
      rooms: plan.rooms.filter((r) => r.kind === 'room').length,
      directRooms: plan.rooms.filter((r) => r.kind === 'dm').length,
      messages,
      threadReplies: plan.rooms.reduce((n, r) => n + r.messages.filter((m) => m.threadRoot !== undefined).length, 0),
      reactions: plan.rooms.reduce((n, r) => n + r.reactions.length, 0),
      requests: plan.requestCount,
    },
  };
  await writeFile(join(buildDir, 'dataset.json'), `${JSON.stringify(meta, null, 2)}\n`);
  await rm(finalDir, { recursive: true, force: true });
  await rename(buildDir, finalDir);
  return { ...artifactsIn(finalDir, meta), buildSeconds: meta.buildSeconds };
}

/** Restores the dataset into a fresh `synapse` database and copies its signing key for the run. */
export async function restoreDataset(bench: LocalHost, dataset: DatasetArtifacts, signingKeyCopy: string): Promise<void> {
  await bench.postgres.restore(dataset.dumpFile, DATABASE_NAME);
  await copyFile(dataset.signingKeyFile, signingKeyCopy);
}

function describeDataset(meta: DatasetMeta): string {
  const c = meta.counts;
  return `Seeded Synapse dataset (built with ${meta.builtWith}): ${c.users} users, ${c.rooms} rooms × ${meta.size.membersPerRoom} members, ${c.directRooms} direct rooms, ${c.messages} messages (${c.threadReplies} thread replies), ${c.reactions} reactions`;
}
