// BullMQ: N job schedulers with a six-field pattern for the instant T on the local Redis (its own
// key prefix), and a worker that sends each job's POST through undici.
import { Queue, Worker } from 'bullmq';
import { Agent } from 'undici';
const [url, nArg, tArg, redisUrl] = process.argv.slice(2);
const N = Number(nArg);
// the instant T, or several in one minute (comma separated): one pattern fires at each
const instants = tArg.split(',').map((t) => new Date(Number(t)));
const T = instants[0];
const r = new URL(redisUrl ?? 'redis://127.0.0.1:6379');
const connection = { host: r.hostname, port: Number(r.port || 6379), maxRetriesPerRequest: null };
const prefix = `bench-bullmq-${process.pid}`;
const agent = new Agent({ connections: 256 });
const origin = new URL(url).origin;
const pattern = `${instants.map((t) => t.getUTCSeconds()).join(',')} ${T.getUTCMinutes()} ${T.getUTCHours()} * * *`;
const queue = new Queue('dispatch', { connection, prefix });
for (let i = 0; i < N; i += 500)
  await Promise.all(
    Array.from({ length: Math.min(500, N - i) }, (_, k) =>
      queue.upsertJobScheduler(
        `j${i + k}`,
        { pattern, tz: 'UTC' },
        { name: `j${i + k}`, data: { i: i + k } },
      ),
    ),
  );
new Worker(
  'dispatch',
  async (job) => {
    const res = await agent.request({ origin, path: `/j${job.data.i}`, method: 'POST' });
    await res.body.dump();
  },
  { connection, prefix, concurrency: 256 },
);
console.log('ready');
process.on('SIGTERM', async () => {
  await queue.obliterate({ force: true }).catch(() => {});
  process.exit(0);
});
