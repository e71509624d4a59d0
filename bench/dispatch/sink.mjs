// The sink of the dispatch benchmark, in its own process: a keep-alive HTTP
// server that records, for each POST, arrival time − the intended fire time T
// (argv: port file, T in epoch ms, expected count). When every expected
// request has arrived (or after the deadline) it prints one JSON line of
// statistics and exits. With several instants (T1,T2 comma separated) every system fires at each,
// and only the last one's burst is measured: what arrives more than 500 ms before it is the
// warm-up (counted as `warmup`).
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [portFile, tArg, nArg, deadlineArg] = process.argv.slice(2);
const T = Number(tArg.split(',').at(-1));
let warmup = 0;
const N = Number(nArg);
const lags = new Float64Array(N);
let count = 0;
const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
  const now = Date.now();
  if (now < T - 500) {
    warmup += 1;
    req.resume();
    req.on('end', () => res.end('ok'));
    return;
  }
  if (count < N) lags[count] = now - T;
  count += 1;
  req.resume();
  req.on('end', () => res.end('ok'));
  if (count === N) setImmediate(finish);
});
server.maxConnections = 8192;
server.listen(0, '127.0.0.1', 4096, () => {
  writeFileSync(portFile, String(server.address().port));
});
setTimeout(finish, Number(deadlineArg)).unref();
let done = false;
function finish() {
  if (done) return;
  done = true;
  const got = Math.min(count, N);
  // CRONIX_BENCH_LAGS=<file>: every lag in arrival order, one per line, for a timeline
  if (process.env.CRONIX_BENCH_LAGS)
    writeFileSync(process.env.CRONIX_BENCH_LAGS, Array.from(lags.subarray(0, got)).join('\n'));
  const xs = Array.from(lags.subarray(0, got)).sort((a, b) => a - b);
  const q = (p) => (xs.length ? xs[Math.min(xs.length - 1, Math.floor(p * xs.length))] : null);
  process.stdout.write(
    `${JSON.stringify({ n: got, extra: Math.max(0, count - N), warmup, p50: q(0.5), p99: q(0.99), max: xs.at(-1) ?? null, min: xs[0] ?? null })}\n`,
  );
  process.exit(0);
}
