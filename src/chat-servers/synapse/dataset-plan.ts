/**
 * What the seeded dataset holds, decided up front from the config's dataset size and a
 * fixed seed, so the same size always yields the same data (and a known, bounded number
 * of API requests). Pure: the seeder (dataset.ts) turns it into Matrix API calls.
 */
import { seededRandom } from '../../util/random.ts';

export interface DatasetSize {
  users: number;
  rooms: number;
  membersPerRoom: number;
  directRooms: number;
  messagesPerRoom: number;
  threadRatio: number;
  reactionRatio: number;
}

export interface PlannedUser {
  localpart: string;
  password: string;
}

/** One message: a plain message, or a reply in the thread of an earlier message. */
export interface PlannedMessage {
  sender: number;
  /** Index (in this room's messages) of the thread root, for thread replies. */
  threadRoot?: number;
}

export interface PlannedReaction {
  sender: number;
  /** Index of the message reacted to. */
  target: number;
  key: string;
}

export interface PlannedRoom {
  kind: 'room' | 'dm';
  name: string;
  creator: number;
  /** Members other than the creator, who join after creation. */
  joiners: number[];
  messages: PlannedMessage[];
  reactions: PlannedReaction[];
}

export interface DatasetPlan {
  users: PlannedUser[];
  rooms: PlannedRoom[];
  /** Requests the seeder will send: a hard bound, checked while seeding. */
  requestCount: number;
}

export const DM_MESSAGES = 10;
const REACTION_KEYS = ['👍', '❤️', '😂', '🎉', '👀', '🚀', '✅', '🙏'];

function sample(rand: () => number, n: number, k: number): number[] {
  const pool = Array.from({ length: n }, (_, i) => i);
  for (let i = 0; i < Math.min(k, n); i++) {
    const j = i + Math.floor(rand() * (n - i));
    [pool[i], pool[j]] = [pool[j] as number, pool[i] as number];
  }
  return pool.slice(0, Math.min(k, n));
}

function localpartFor(i: number): string {
  return `user${String(i + 1).padStart(5, '0')}`;
}

/** Bench-only passwords, derived from the localpart so the users file can be rebuilt. */
function passwordFor(localpart: string): string {
  return `lg-${localpart}-pw`;
}

function planMessages(
  rand: () => number,
  members: number[],
  count: number,
  threadRatio: number,
  reactionRatio: number,
): Pick<PlannedRoom, 'messages' | 'reactions'> {
  const messages: PlannedMessage[] = [];
  const replies = new Set(sample(rand, Math.max(count - 1, 0), Math.round(threadRatio * count)).map((i) => i + 1));
  const roots: number[] = [];
  for (let i = 0; i < count; i++) {
    const sender = members[Math.floor(rand() * members.length)] as number;
    if (replies.has(i) && roots.length) {
      messages.push({ sender, threadRoot: roots[Math.floor(rand() * roots.length)] as number });
    } else {
      messages.push({ sender });
      roots.push(i);
    }
  }
  const reactions: PlannedReaction[] = [];
  const seen = new Set<string>();
  const wanted = Math.round(reactionRatio * count);
  for (let tries = 0; reactions.length < wanted && tries < wanted * 10 && count > 0; tries++) {
    const r: PlannedReaction = {
      sender: members[Math.floor(rand() * members.length)] as number,
      target: Math.floor(rand() * count),
      key: REACTION_KEYS[Math.floor(rand() * REACTION_KEYS.length)] as string,
    };
    const id = `${r.sender}/${r.target}/${r.key}`;
    if (!seen.has(id)) {
      seen.add(id);
      reactions.push(r);
    }
  }
  return { messages, reactions };
}

export function planDataset(size: DatasetSize, seed = 20240601): DatasetPlan {
  const rand = seededRandom(seed);
  const users = Array.from({ length: size.users }, (_, i) => {
    const localpart = localpartFor(i);
    return { localpart, password: passwordFor(localpart) };
  });
  const rooms: PlannedRoom[] = [];
  // Every user is in at least one room: rooms take members round-robin first, then at random.
  for (let r = 0; r < size.rooms; r++) {
    const members = new Set<number>();
    for (let u = r; u < size.users && members.size < size.membersPerRoom; u += size.rooms) members.add(u);
    for (const u of sample(rand, size.users, size.membersPerRoom)) if (members.size < size.membersPerRoom) members.add(u);
    const list = [...members];
    rooms.push({
      kind: 'room',
      name: `room-${String(r + 1).padStart(4, '0')}`,
      creator: list[0] as number,
      joiners: list.slice(1),
      ...planMessages(rand, list, size.messagesPerRoom, size.threadRatio, size.reactionRatio),
    });
  }
  if (size.users >= 2) {
    const pairs = new Set<string>();
    for (let d = 0, tries = 0; d < size.directRooms && tries < size.directRooms * 20; tries++) {
      const [a, b] = sample(rand, size.users, 2) as [number, number];
      const key = a < b ? `${a}-${b}` : `${b}-${a}`;
      if (pairs.has(key)) continue;
      pairs.add(key);
      rooms.push({
        kind: 'dm',
        name: `dm-${key}`,
        creator: a,
        joiners: [b],
        ...planMessages(rand, [a, b], Math.min(DM_MESSAGES, size.messagesPerRoom), 0, size.reactionRatio),
      });
      d++;
    }
  }
  const requestCount =
    size.users * 2 + // nonce + register
    rooms.reduce((n, room) => n + 1 + room.joiners.length + room.messages.length + room.reactions.length, 0) +
    size.users; // m.direct account data
  return { users, rooms, requestCount };
}
