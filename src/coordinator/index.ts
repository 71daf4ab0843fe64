export { runUnbounded, type RunUnboundedOptions, type UnboundedResult, type UnboundedProgress, type StopCause } from './unbounded.ts';
export { runBounded, type RunBoundedOptions, type BoundedResult, type BoundedProgress } from './bounded.ts';
export { realClock, sleepUnlessAborted } from './clock.ts';
export { leastSquaresSlope, lastWindow, isEquilibrium, type WindowStats } from './equilibrium.ts';
export type { Clock, HealthSource, TimelinePoint, UserControl } from './types.ts';
