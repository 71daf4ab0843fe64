// The draws that shape a simulated user's workload (which action next, how long to idle),
// from a seeded generator when LOADGATE_WORKLOAD_SEED is set: two load generators given the
// same seed send every VU through the same sequence of actions and idle times, so a duet's
// two sides carry the same workload and its randomness cancels in their ratio (common
// random numbers). Without a seed, Math.random. Plain JavaScript: k6 imports it, and so do
// the tests.

// mulberry32 (Tommy Ettinger, public domain): a 32-bit state, period 2^32, enough for the
// few thousand draws a VU makes in a run.
export function seededRandom(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// FNV-1a, 32-bit: the seed text and the VU number into a generator state.
export function hashSeed(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

// One VU's workload draws: its own stream, the same for VU n under the same seed.
export function workloadRandom(seed, vu) {
  return seed ? seededRandom(hashSeed(`${seed}:${vu}`)) : Math.random;
}
