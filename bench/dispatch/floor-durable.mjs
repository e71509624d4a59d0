// Durable floor: the bare http.request loop of floor-http.mjs plus only the per-fire work the
// SPEC obliges a durable, signing scheduler to do, written as directly as node allows:
//   - before T, one `running` row per fire in SQLite (WAL, synchronous=FULL), committed in one
//     transaction (SPEC §7: a row before the request leaves; planned ahead, as cronix does);
//   - at T, per fire: a `run-started` log line (pino, asynchronous), the injected X-Cron-*
//     headers with a fresh traceparent and an HMAC-SHA256 signature (SPEC §4, §5.6);
//   - per response: a `run-ended` log line; the ends are committed in one transaction once the
//     burst has left (as cronix defers run-end writes behind a burst).
// No scheduling, no policies, no API, no retries: a lower bound for any scheduler that keeps
// SPEC §4–§7, not a competitor. argv: sink URL, N, T (epoch ms; or several instants, comma
// separated: N fires at each).
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';

const [url, nArg, tArg] = process.argv.slice(2);
const N = Number(nArg);
const instants = tArg.split(',').map(Number);
const SECRET = 'bench-secret-0123456789';
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const target = new URL(url);
const dir = mkdtempSync(join(tmpdir(), 'cronix-durable-floor-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
process.on('SIGTERM', () => process.exit(0)); // the bench stops it with SIGTERM
const db = new Database(join(dir, 'runs.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
db.exec(`CREATE TABLE runs (id TEXT PRIMARY KEY, run_key TEXT NOT NULL UNIQUE, job TEXT NOT NULL,
  scheduled_ms INTEGER NOT NULL, phase TEXT NOT NULL, started_ms INTEGER, ended_ms INTEGER,
  outcome TEXT, status INTEGER)`);
const insert = db.prepare(
  `INSERT INTO runs (id, run_key, job, scheduled_ms, phase, started_ms) VALUES (?, ?, ?, ?, 'running', ?)`,
);
const end = db.prepare(
  `UPDATE runs SET phase = 'ended', ended_ms = ?, outcome = ?, status = ? WHERE id = ?`,
);
const destination = pino.destination({ dest: 1, sync: false });
const log = pino(
  {
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (l) => ({ level: l }) },
  },
  destination,
);

// planned ahead: every fire's row is durable before its instant
const bursts = instants.map((T) => {
  const fireSec = String(Math.floor(T / 1000));
  const runs = [];
  for (let i = 0; i < N; i++) {
    const id = randomUUID();
    runs.push({ id, key: `bench/j${i}#${new Date(T).toISOString()}`, job: `j${i}`, T, fireSec });
  }
  return { T, runs };
});
db.transaction(() => {
  for (const { runs } of bursts) for (const r of runs) insert.run(r.id, r.key, r.job, r.T, r.T);
})();
console.log('ready');

const ended = [];
const commitEnds = () => {
  db.transaction(() => {
    for (const e of ended) end.run(e.at, e.outcome, e.status, e.id);
  })();
  ended.length = 0;
};

function fire(r) {
  log.info({ event: 'run-started', job: r.job, run_id: r.id, run_key: r.key }, `${r.job} started`);
  const path = `/${r.job}`;
  const now = Date.now();
  const ts = Math.floor(now / 1000);
  const mac = createHmac('sha256', SECRET).update(`${ts}.POST.${path}.`).digest('hex');
  const headers = {
    'X-Cron-Run-Id': r.id,
    'X-Cron-Run-Key': r.key,
    'Idempotency-Key': r.key,
    'X-Cron-Schedule-Name': r.job,
    'X-Cron-Fire-Time': r.fireSec,
    'X-Cron-Fire-Time-Actual': r.fireSec,
    'X-Cron-Attempt': '1',
    traceparent: `00-${r.id.replace(/-/g, '')}-${randomBytes(8).toString('hex')}-01`,
    'X-Cron-Signature': `t=${ts},v1=${mac}`,
    'content-length': 0,
  };
  const req = http.request(
    { host: target.hostname, port: target.port, path, method: 'POST', agent, headers },
    (res) => {
      res.resume();
      res.on('end', () => {
        ended.push({ id: r.id, at: Date.now(), outcome: 'success', status: res.statusCode });
        log.info(
          {
            event: 'run-ended',
            job: r.job,
            run_id: r.id,
            outcome: 'success',
            status: res.statusCode,
          },
          `${r.job} success`,
        );
        if (ended.length === N) commitEnds();
      });
    },
  );
  req.on('error', () => {});
  req.end();
}

for (const { T, runs } of bursts)
  setTimeout(() => {
    for (const r of runs) fire(r);
  }, T - Date.now());
// ends not all in by the last instant + 30 s are committed anyway
setTimeout(() => ended.length > 0 && commitEnds(), instants.at(-1) - Date.now() + 30_000).unref();
