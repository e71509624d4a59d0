/**
 * A child process that floods a daemon with event stream requests (`GET /api/v1/events`), so the
 * test process keeps its own descriptors: `node sse-flood.mjs URL TOKEN COUNT SOURCES`. Each of
 * COUNT raw connections comes from one of SOURCES loopback addresses (127.0.1.1, 127.0.1.2, …:
 * distinct clients), at most 256 being opened at a time. A 200 stream is held open; anything
 * else is read to its end and counted by status. Prints one JSON line when every attempt has
 * its answer — `{"attempts","open","refused","statuses","errors"}` — then holds the streams
 * until stdin closes or says "close", closes them all, prints `{"closed":N}` and exits.
 */
import { connect } from 'node:net';

const [url, token, countText, sourcesText] = process.argv.slice(2);
const target = new URL(url);
const count = Number(countText);
const sources = Number(sourcesText);
const open = [];
const statuses = {};
let errors = 0;
let answered = 0;
let started = 0;
let inFlight = 0;

function attempt(i) {
  inFlight++;
  const socket = connect({
    host: target.hostname,
    port: Number(target.port),
    localAddress: `127.0.1.${(i % sources) + 1}`,
  });
  let head = '';
  let settled = false;
  const settle = (status) => {
    if (settled) return;
    settled = true;
    answered++;
    inFlight--;
    if (status === 0) errors++;
    else statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === 200) open.push(socket);
    next();
  };
  socket.setEncoding('latin1');
  socket.on('connect', () =>
    socket.write(
      `GET /api/v1/events HTTP/1.1\r\nHost: ${target.host}\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    ),
  );
  socket.on('data', (d) => {
    if (settled) return;
    head += d;
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(head);
    if (m) settle(Number(m[1]));
  });
  socket.on('error', () => settle(0));
  socket.on('close', () => settle(0));
}

function next() {
  while (started < count && inFlight < 256) attempt(started++);
  if (answered === count) {
    process.stdout.write(
      `${JSON.stringify({ attempts: count, open: open.length, refused: statuses[503] ?? 0, statuses, errors })}\n`,
    );
  }
}

function closeAll() {
  for (const s of open) s.destroy();
  process.stdout.write(`${JSON.stringify({ closed: open.length })}\n`);
  setTimeout(() => process.exit(0), 100);
}

process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  if (d.includes('close')) closeAll();
});
process.stdin.on('end', closeAll);
next();
