import type { RunResultInput, Timing } from '../../src/results/schema.ts';
import { seededRandom } from '../../src/util/random.ts';

/**
 * Deterministic run results for the shipped examples, the benchmark and the tests.
 * The seed reports publish only headline numbers (supported users, error counts, heap and
 * stack deltas); everything else here (series shapes, handler timings, request counts) is
 * generated around those numbers with a seeded PRNG, and every file says so.
 */

export function seedOf(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

export const MATTERMOST_API_HANDLERS = [
  'getPostsForChannel',
  'viewChannel',
  'createPost',
  'getChannelMembersForUser',
  'getPostThread',
  'getThreadsForUser',
  'updateThreadReadForUser',
  'getChannelByName',
  'getUser',
  'getUsersByIds',
  'saveReaction',
  'patchPost',
  'searchUsers',
  'searchPostsInTeamForUser',
  'getProfileImage',
  'login',
  'logout',
  'createUser',
  'getTeamsForUser',
  'getChannelsForTeamForUser',
  'getPostsByIds',
  'getChannelUnread',
  'createDirectChannel',
  'createGroupChannel',
  'addChannelMember',
  'deletePost',
  'getCategoriesForTeamForUser',
  'updateCategoriesForTeamForUser',
  'getFileInfosForPost',
  'getCustomEmojis',
];

export const MATTERMOST_STORE_METHODS = [
  'PostStore.GetPosts',
  'PostStore.GetPostsSince',
  'PostStore.Save',
  'PostStore.GetSingle',
  'PostStore.GetPostsBefore',
  'ChannelStore.GetMember',
  'ChannelStore.GetChannels',
  'ChannelStore.UpdateLastViewedAt',
  'ChannelStore.GetByName',
  'ChannelStore.GetAllChannelMembersForUser',
  'ThreadStore.GetThreadsForUser',
  'ThreadStore.MarkAsRead',
  'ThreadStore.GetThreadForUser',
  'UserStore.Get',
  'UserStore.GetProfileByIds',
  'UserStore.Search',
  'ReactionStore.Save',
  'TeamStore.GetTeamsForUser',
  'SessionStore.Get',
  'SessionStore.Save',
  'PreferenceStore.GetCategory',
  'ChannelStore.GetSidebarCategories',
  'FileInfoStore.GetForPost',
  'PostStore.Search',
  'StatusStore.Get',
];

export interface SideSpec {
  version: string;
  repeat: number;
  seed: string;
  /** Multipliers applied to the shared shape, to encode a seed report's finding. */
  apiFactor?: number;
  storeFactor?: number;
  cpuFactor?: number;
  heapFactor?: number;
  stackFactor?: number;
  handlerFactors?: Record<string, number>;
  /** Extra multiplier on the p99 API series during the ramp-up (v11's password hashing). */
  rampUpP99Spike?: number;
}

export interface BoundedSpec extends SideSpec {
  type: 'bounded';
  name: string;
  users: number;
  rampUpSec: number;
  durationSec: number;
  errors: number;
  timeouts?: number;
}

export interface UnboundedSpec extends SideSpec {
  type: 'unbounded';
  name: string;
  maxUsers: number;
  supportedUsers: number;
  stabilityWindowSec: number;
  durationSec: number;
  errors: number;
  timeouts?: number;
  converged?: boolean;
}

export interface CommonSpec {
  system: string;
  provenance: RunResultInput['provenance'];
  bench: RunResultInput['bench'];
  handlers?: readonly string[];
  storeMethods?: readonly string[];
  stepSec?: number;
  startedAt?: string;
  links?: RunResultInput['links'];
  /** Requests per connected user per second, to turn users into RPS and totals. */
  rpsPerUser?: number;
}

function timings(names: readonly string[], rand: () => number, baseMs: number, factor: number, perName: Record<string, number>, totalCount: number): Timing[] {
  const shape = seededRandom(seedOf(names.join('|'))); // shared across sides so deltas are the factors + noise
  return names.map((name, i) => {
    const weight = 1 / (i + 1);
    const avg = baseMs * (0.3 + 3 * shape()) * factor * (perName[name] ?? 1) * (1 + (rand() - 0.5) * 0.02);
    return {
      name,
      count: Math.round((totalCount * weight) / 4),
      avgMs: round(avg),
      p99Ms: round(avg * (4 + 6 * shape()) * (1 + (rand() - 0.5) * 0.04)),
    };
  });
}

export function syntheticRun(common: CommonSpec, spec: BoundedSpec | UnboundedSpec): RunResultInput {
  const rand = seededRandom(seedOf(`${spec.seed}|${spec.version}|${spec.name}|${spec.repeat}`));
  const step = common.stepSec ?? 5;
  const n = Math.floor(spec.durationSec / step) + 1;
  const t: number[] = [];
  const users: number[] = [];
  const rampEnd = spec.type === 'bounded' ? spec.rampUpSec : Math.max(60, spec.durationSec - spec.stabilityWindowSec - 600);
  const target = spec.type === 'bounded' ? spec.users : spec.supportedUsers;
  for (let i = 0; i < n; i++) {
    const sec = i * step;
    t.push(sec);
    const ramp = Math.min(1, sec / rampEnd);
    const wobble = spec.type === 'unbounded' && sec > rampEnd ? (rand() - 0.5) * 0.01 * target : 0;
    users.push(Math.max(0, Math.round(target * ramp + wobble)));
  }
  const rpsPerUser = common.rpsPerUser ?? 0.2;
  const series = (f: (u: number, sec: number, i: number) => number, unit: 'percent' | 'bytes' | 'count' | 'ms' | 'rps' | 'users') => ({
    unit,
    t,
    v: users.map((u, i) => round(f(u, t[i] as number, i))),
  });
  const load = (u: number) => u / Math.max(target, 1);
  const noise = (scale: number) => 1 + (rand() - 0.5) * scale;
  const spike = (sec: number) => (spec.rampUpP99Spike && sec > rampEnd * 0.7 && sec <= rampEnd ? spec.rampUpP99Spike : 1);
  const apiF = spec.apiFactor ?? 1;
  const storeF = spec.storeFactor ?? 1;
  const requests = Math.round(users.reduce((s, u) => s + u * rpsPerUser * step, 0));
  const stableStart = spec.type === 'bounded' ? spec.rampUpSec : spec.durationSec - spec.stabilityWindowSec;
  return {
    schemaVersion: 1,
    provenance: common.provenance,
    target: { system: common.system, version: spec.version },
    test:
      spec.type === 'bounded'
        ? { type: 'bounded', name: spec.name, users: spec.users, rampUpSec: spec.rampUpSec, durationSec: spec.durationSec }
        : {
            type: 'unbounded',
            name: spec.name,
            maxUsers: spec.maxUsers,
            usersIncrement: 8,
            usersDecrement: 8,
            restSec: 2,
            stabilityWindowSec: spec.stabilityWindowSec,
            maxDurationSec: Math.max(spec.durationSec, 14400),
            health: [],
          },
    repeat: spec.repeat,
    startedAt: common.startedAt ?? '2025-09-01T10:00:00Z',
    finishedAt: new Date(Date.parse(common.startedAt ?? '2025-09-01T10:00:00Z') + spec.durationSec * 1000).toISOString(),
    status: 'completed',
    problems: [],
    ...(spec.type === 'unbounded' ? { supportedUsers: spec.supportedUsers, converged: spec.converged ?? true } : {}),
    stableWindow: { startSec: stableStart, endSec: spec.durationSec },
    totals: { requests, errors: spec.errors, timeouts: spec.timeouts ?? Math.round(spec.errors / 50) },
    api: timings(common.handlers ?? MATTERMOST_API_HANDLERS, rand, 12, apiF, spec.handlerFactors ?? {}, requests),
    store: timings(common.storeMethods ?? MATTERMOST_STORE_METHODS, rand, 1.2, storeF, {}, requests * 3),
    series: {
      apiAvgMs: series((u) => (8 + 10 * load(u)) * apiF * noise(0.1), 'ms'),
      apiP99Ms: series((u, sec) => (60 + 140 * load(u)) * apiF * spike(sec) * noise(0.2), 'ms'),
      storeAvgMs: series((u) => (0.8 + 0.9 * load(u)) * storeF * noise(0.1), 'ms'),
      storeP99Ms: series((u) => (8 + 20 * load(u)) * storeF * noise(0.2), 'ms'),
      cpuPercent: series(
        (u, sec) => Math.min(100, (5 + 70 * load(u)) * (spec.cpuFactor ?? 1) * (sec <= rampEnd && spec.rampUpP99Spike ? 1.08 : 1) * noise(0.06)),
        'percent',
      ),
      threads: series((u) => (300 + 2.6 * u) * noise(0.02), 'count'),
      heapInUseBytes: series((u) => (450e6 + 90e3 * u) * (spec.heapFactor ?? 1) * noise(0.01), 'bytes'),
      connectedUsers: series((u) => u, 'users'),
      rps: series((u) => u * rpsPerUser * noise(0.05), 'rps'),
      stackInUseBytes: series((u) => (12e6 + 5.5e3 * u) * (spec.stackFactor ?? 1) * noise(0.01), 'bytes'),
      // Last, so the series above keep their random draws (and the examples their figures).
      apiP50Ms: series((u) => (6 + 7 * load(u)) * apiF * noise(0.1), 'ms'),
      apiP95Ms: series((u, sec) => (40 + 90 * load(u)) * apiF * spike(sec) * noise(0.15), 'ms'),
      errorPercent: series(() => (requests ? ((100 * spec.errors) / requests) * noise(0.3) : 0), 'percent'),
    },
    generator: { saturated: false },
    bench: common.bench,
    links: common.links ?? [],
  };
}
