// The third-adapter test's k6 scenario: each user asks GET /echo, then idles. It records
// every request through loadgate's client metrics, as the shipped scenarios do.
import http from 'k6/http';
import { sleep } from 'k6';
import { recordResponse, touchMetrics } from '../../../src/engine/k6/scenarios/lib/metrics.js';

const env = __ENV;

export const options = {
  scenarios: {
    users: {
      executor: 'externally-controlled',
      vus: Number(env.LOADGATE_INITIAL_USERS || 0),
      maxVUs: Number(env.LOADGATE_MAX_USERS || 1),
      duration: env.LOADGATE_DURATION || '10m',
    },
  },
  discardResponseBodies: true,
};

export function setup() {
  touchMetrics();
}

export default function () {
  const started = Date.now();
  const res = http.get(`${env.LOADGATE_BASE_URL}/echo`, { timeout: Number(env.LOADGATE_REQUEST_TIMEOUT_MS || 10000) });
  recordResponse(res, Date.now() - started);
  sleep(0.1 + Math.random() * 0.2);
}
