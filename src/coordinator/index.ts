export { runUnbounded, type UnboundedResult } from './unbounded.ts';
export { runBounded, type BoundedResult } from './bounded.ts';
export { realClock } from './clock.ts';
export type { Clock, HealthSource, UserControl } from './types.ts';
