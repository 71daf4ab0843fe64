import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planDataset, DM_MESSAGES } from '../../../src/chat-servers/synapse/dataset-plan.ts';
import { datasetKey } from '../../../src/chat-servers/synapse/dataset.ts';
import { parseOverride } from '../../../src/chat-servers/synapse/overrides.ts';

const size = { users: 50, rooms: 8, membersPerRoom: 10, directRooms: 6, messagesPerRoom: 20, threadRatio: 0.2, reactionRatio: 0.1 };

test('the plan is deterministic and matches the configured size', () => {
  const plan = planDataset(size);
  assert.deepEqual(planDataset(size), plan);
  assert.equal(plan.users.length, 50);
  assert.equal(new Set(plan.users.map((u) => u.localpart)).size, 50);
  const rooms = plan.rooms.filter((r) => r.kind === 'room');
  const dms = plan.rooms.filter((r) => r.kind === 'dm');
  assert.equal(rooms.length, 8);
  assert.equal(dms.length, 6);
  for (const r of rooms) {
    const members = [r.creator, ...r.joiners];
    assert.equal(members.length, 10);
    assert.equal(new Set(members).size, 10, 'no duplicate members');
    assert.equal(r.messages.length, 20);
    assert.equal(r.messages.filter((m) => m.threadRoot !== undefined).length, 4, '20 % thread replies');
    assert.equal(r.reactions.length, 2, '10 % reactions');
    for (const m of r.messages) assert.ok(members.includes(m.sender));
    r.messages.forEach((m, i) => {
      if (m.threadRoot !== undefined) {
        assert.ok(m.threadRoot < i, 'a reply comes after its root');
        assert.equal(r.messages[m.threadRoot]!.threadRoot, undefined, 'roots are not replies themselves');
      }
    });
    assert.equal(new Set(r.reactions.map((x) => `${x.sender}/${x.target}/${x.key}`)).size, r.reactions.length, 'no duplicate reaction');
  }
  for (const d of dms) {
    assert.equal(d.joiners.length, 1);
    assert.notEqual(d.creator, d.joiners[0]);
    assert.equal(d.messages.length, DM_MESSAGES);
  }
  // Every user is in at least one room (round-robin first).
  const inRooms = new Set(rooms.flatMap((r) => [r.creator, ...r.joiners]));
  assert.equal(inRooms.size, 50);
  // The request bound: registration (2 each) + per room (create, joins, messages, reactions) + m.direct per user.
  const expected = 50 * 2 + plan.rooms.reduce((n, r) => n + 1 + r.joiners.length + r.messages.length + r.reactions.length, 0) + 50;
  assert.equal(plan.requestCount, expected);
});

test('the dataset cache key changes with size, building version and password hashing only', () => {
  const k = datasetKey(size, '1.162.0', []);
  assert.match(k, /^u50-r8x10-d6-m20-synapse1\.162\.0-[0-9a-f]{10}$/);
  assert.equal(datasetKey(size, '1.162.0', [parseOverride('caches.global_factor=2', '--x')]), k);
  assert.notEqual(datasetKey(size, '1.162.0', [parseOverride('bcrypt_rounds=10', '--x')]), k);
  assert.notEqual(datasetKey(size, '1.163.2', []), k);
  assert.notEqual(datasetKey({ ...size, messagesPerRoom: 21 }, '1.162.0', []), k);
});
