// A minimal chat server for the third-adapter test: a client API of one request (GET /echo,
// a little CPU, JSON back), /health, and Prometheus metrics of its own on a second port.
// Usage: node server.mjs <client port> <metrics port>
import { createServer } from 'node:http';
import { createHash } from 'node:crypto';

const [clientPort, metricsPort] = process.argv.slice(2).map(Number);
let requests = 0;
let seconds = 0;

createServer((req, res) => {
  if (req.url === '/health') return void res.end('OK');
  if (req.url !== '/echo') {
    res.statusCode = 404;
    return void res.end('{}');
  }
  const started = process.hrtime.bigint();
  let digest = 'echo';
  for (let i = 0; i < 200; i++) digest = createHash('sha256').update(digest).digest('hex');
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ digest }));
  requests += 1;
  seconds += Number(process.hrtime.bigint() - started) / 1e9;
}).listen(clientPort, '127.0.0.1');

// Prometheus' text format (version 0.0.4): counters with HELP and TYPE lines.
createServer((req, res) => {
  res.setHeader('content-type', 'text/plain; version=0.0.4');
  res.end(
    '# HELP echo_requests_total Requests served.\n# TYPE echo_requests_total counter\n' +
      `echo_requests_total ${requests}\n` +
      '# HELP echo_request_seconds_total Seconds spent serving them.\n# TYPE echo_request_seconds_total counter\n' +
      `echo_request_seconds_total ${seconds}\n`,
  );
}).listen(metricsPort, '127.0.0.1');

process.on('SIGTERM', () => process.exit(0));
