/**
 * X-Cron-Previous-Success-Time (SPEC §5.3) from the daemon: the ledger's last success of the job,
 * read once at start-up for every job that has one, then kept up to date as runs succeed. On a
 * SQLite and a PostgreSQL ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropLedgers, freshLedger, LEDGERS, manifest, startTestDaemon } from '../helpers/daemon.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';
import { startSink, type Sink } from '../helpers/sink.js';

const T0 = Date.UTC(2026, 0, 1, 0, 0, 30);
let sink: Sink;
beforeAll(async () => {
  sink = await startSink(() => ({ status: 200 }));
});
afterAll(async () => {
  await sink.close();
});

const job = (name: string) => ({
  name,
  schedule: '0 0 1 1 *',
  request: { url: `${sink.url}/${name}` },
  policy: { concurrency: 'Allow', retries: { max_attempts: 1 } },
});
/** The header of the last request to `/name`, as seconds (or undefined when absent). */
const previousOf = (name: string) => {
  const sent = sink.requests.filter((r) => r.url === `/${name}`).at(-1);
  if (!sent) throw new Error(`nothing was sent to /${name}`);
  return sent.headers['x-cron-previous-success-time'];
};

describe.each(LEDGERS)('on a %s ledger', (kind) => {
  afterAll(dropLedgers);

  it('carries the last success across a restart and a reload, and none for a job that never succeeded', async () => {
    const dbPath = freshLedger(kind);
    const clock = new ManualClock(T0);
    // first life: "kept" and "later" succeed once each
    let daemon = await startTestDaemon(clock, [manifest('p', [job('kept'), job('later')])], dbPath);
    for (const name of ['kept', 'later']) await daemon.scheduler.trigger('p', name);
    await daemon.waitEnded(2);
    const succeeded = new Map(daemon.ended.map((r) => [r.job, r.endedAt as number]));
    expect(previousOf('kept')).toBeUndefined();
    await daemon.stop();

    // second life without "later": "kept" sends its first life's success, "fresh" none
    clock.t += 60_000;
    daemon = await startTestDaemon(clock, [manifest('p', [job('kept'), job('fresh')])], dbPath);
    await daemon.scheduler.trigger('p', 'kept');
    await daemon.scheduler.trigger('p', 'fresh');
    await daemon.waitEnded(2);
    expect(previousOf('kept')).toBe(String(Math.floor((succeeded.get('kept') as number) / 1000)));
    expect(previousOf('fresh')).toBeUndefined();

    // "later" comes back by reload: it sends the success it had before this start
    await daemon.scheduler.reload([manifest('p', [job('kept'), job('fresh'), job('later')])]);
    clock.t += 60_000;
    await daemon.scheduler.trigger('p', 'later');
    // "fresh" has succeeded since: its next run sends that
    await daemon.scheduler.trigger('p', 'fresh');
    await daemon.waitEnded(4);
    await settle(20);
    expect(previousOf('later')).toBe(String(Math.floor((succeeded.get('later') as number) / 1000)));
    const fresh = daemon.ended.find((r) => r.job === 'fresh') as { endedAt: number };
    expect(previousOf('fresh')).toBe(String(Math.floor(fresh.endedAt / 1000)));
    await daemon.stop();
  });
});
