/**
 * SPEC §12 end to end in one process: a real webhook receiver (signature checked
 * independently), a real SMTP server with STARTTLS and authentication, real runs
 * against a scripted app. Grouping, recovery, slow runs, skipped runs, retries
 * with Retry-After, and a dead notifier that must not touch the runs.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SMTPServer } from 'smtp-server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DaemonMetrics } from '../../src/daemon/metrics.js';
import { freePort, sequence, startSink, type RecordedRequest, type Sink } from '../helpers/sink.js';
import { selfSignedCert } from '../helpers/tls.js';
import {
  HOOK_SECRET,
  notifyManifest,
  signatureValid,
  startNotifyDaemon,
  type NotifyDaemon,
} from './harness.js';

let app: Sink;
let hook: Sink;
let daemon: NotifyDaemon | undefined;

beforeAll(async () => {
  app = await startSink();
  hook = await startSink();
});
afterAll(async () => {
  await app.close();
  await hook.close();
});
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
});

const failing = {
  retries: { max_attempts: 1, min_seconds: 0, max_seconds: 1 },
  timeout_seconds: 5,
};

/** The webhook requests of this test (the receiver is shared), parsed. */
function posts(from: number): { req: RecordedRequest; body: Record<string, unknown> }[] {
  return hook.requests
    .slice(from)
    .map((req) => ({ req, body: JSON.parse(req.bodyText) as Record<string, unknown> }));
}

describe('webhook notifications', () => {
  it('first failure notifies once, repeats are grouped with their count, recovery notifies once, signed', async () => {
    hook.setScript(() => ({ status: 200 }));
    app.setScript(() => ({ status: 500 }));
    const start = hook.requests.length;
    daemon = await startNotifyDaemon(
      notifyManifest(
        'shop',
        [
          {
            name: 'sync',
            schedule: '0 0 1 1 *',
            request: { url: `${app.url}/sync` },
            policy: failing,
            notify: [{ to: 'chat', on: ['failed', 'recovered'], repeat_every_seconds: 2 }],
          },
        ],
        {
          chat: {
            type: 'webhook',
            url: `${hook.url}/hooks/chat?team=ops`,
            secret_refs: [`raw:${HOOK_SECRET}`],
          },
        },
      ),
    );
    const d = daemon;
    // three failures in a row: one message
    for (let i = 1; i <= 3; i++) {
      await d.scheduler.trigger('shop', 'sync');
      await d.waitEnded(i);
    }
    await d.waitNotification((n) => n.event === 'failed' && n.status === 'delivered');
    expect(d.ended.map((r) => r.outcome)).toEqual([
      'retries_exhausted',
      'retries_exhausted',
      'retries_exhausted',
    ]);
    // past repeat_every_seconds, the next failure carries the count since the last message
    await new Promise((r) => setTimeout(r, 2100));
    await d.scheduler.trigger('shop', 'sync');
    await d.waitEnded(4);
    await d.waitNotification(
      (n) => n.event === 'failed' && n.count === 3 && n.status === 'delivered',
    );
    // success: recovered once; a second success: nothing
    app.setScript(() => ({ status: 200 }));
    await d.scheduler.trigger('shop', 'sync');
    await d.waitEnded(5);
    await d.waitNotification((n) => n.event === 'recovered' && n.status === 'delivered');
    await d.scheduler.trigger('shop', 'sync');
    await d.waitEnded(6);
    await new Promise((r) => setTimeout(r, 300));

    const got = posts(start);
    expect(got.map((p) => [p.body['event'], p.body['count']])).toEqual([
      ['failed', 1],
      ['failed', 3],
      ['recovered', 4],
    ]);
    for (const { req, body } of got) {
      expect(req.method).toBe('POST');
      expect(req.url).toBe('/hooks/chat?team=ops');
      expect(req.headers['content-type']).toBe('application/json');
      expect(
        signatureValid(req.headers['x-cron-signature'], req.url, req.bodyText, HOOK_SECRET),
      ).toBe(true);
      expect(Object.keys(body).sort()).toEqual(['app', 'count', 'event', 'job', 'run', 'text']);
      expect(body['text']).not.toMatch(/\n/);
      expect(body['text']).toContain('shop/sync');
    }
    expect(got[0]!.body['text']).toMatch(
      /^cronix: shop\/sync failed: retries_exhausted \(HTTP 500\); run /,
    );
    expect(got[1]!.body['text']).toContain('(3 times since the last message)');
    // recorded and listed
    const list = await d.store.listNotifications({ app: 'shop' });
    expect(list.map((n) => [n.event, n.status, n.attempts])).toEqual([
      ['recovered', 'delivered', 1],
      ['failed', 'delivered', 1],
      ['failed', 'delivered', 1],
    ]);
  }, 30_000);

  it('slow runs notify once; skipped and stopped runs never notify', async () => {
    hook.setScript(() => ({ status: 200 }));
    app.setScript(() => ({ status: 200, delayMs: 2500 }));
    const start = hook.requests.length;
    daemon = await startNotifyDaemon(
      notifyManifest(
        'shop',
        [
          {
            name: 'report',
            schedule: '0 0 1 1 *',
            request: { url: `${app.url}/report` },
            policy: { concurrency: 'Forbid', timeout_seconds: 10 },
            notify: [
              { to: 'chat', on: ['failed', 'missed', 'recovered', 'slow'], slow_after_seconds: 1 },
            ],
          },
        ],
        { chat: { type: 'webhook', url: `${hook.url}/slow` } },
      ),
    );
    const d = daemon;
    const first = await d.scheduler.trigger('shop', 'report');
    const skipped = await d.scheduler.trigger('shop', 'report');
    expect(skipped.admission).toBe('skipped');
    const slow = await d.waitNotification((n) => n.event === 'slow' && n.status === 'delivered');
    expect(slow.runId).toBe(first.run.id);
    await d.waitEnded(2);
    // a run cancelled while active ends stopped: no notification either
    const third = await d.scheduler.trigger('shop', 'report');
    await new Promise((r) => setTimeout(r, 200));
    await d.scheduler.cancel(third.run.id);
    await d.waitEnded(3);
    await new Promise((r) => setTimeout(r, 1500));
    expect(d.ended.map((r) => r.outcome).sort()).toEqual(['skipped', 'stopped', 'success']);
    const got = posts(start);
    expect(got.map((p) => p.body['event'])).toEqual(['slow']);
    expect(got[0]!.req.headers['x-cron-signature']).toBeUndefined(); // no secret refs: unsigned
    expect(got[0]!.body['text']).toMatch(/is slow: run .* still running after 1 s/);
    expect((await d.store.listNotifications({})).map((n) => n.event)).toEqual(['slow']);
  }, 30_000);

  it('503, 503 with Retry-After, then 200: delivered on the third try and recorded', async () => {
    hook.setScript(
      sequence([
        { status: 503, headers: { 'retry-after': '1' } },
        { status: 503, headers: { 'retry-after': '1' } },
        200,
      ]),
    );
    app.setScript(() => ({ status: 400 }));
    const start = hook.requests.length;
    daemon = await startNotifyDaemon(
      notifyManifest(
        'shop',
        [
          {
            name: 'bill',
            schedule: '0 0 1 1 *',
            request: { url: `${app.url}/bill` },
            policy: failing,
            notify: [{ to: 'chat' }],
          },
        ],
        {
          chat: { type: 'webhook', url: `${hook.url}/retry`, secret_refs: [`raw:${HOOK_SECRET}`] },
        },
      ),
    );
    const d = daemon;
    await d.scheduler.trigger('shop', 'bill');
    const done = await d.waitNotification((n) => n.status !== 'pending');
    expect(done).toMatchObject({
      event: 'failed',
      status: 'delivered',
      attempts: 3,
      lastStatus: 200,
      lastError: null,
    });
    const tries = hook.requests.slice(start);
    expect(tries).toHaveLength(3);
    expect(new Set(tries.map((r) => r.headers['x-cron-notification-id']))).toEqual(
      new Set([done.id]),
    );
    expect(new Set(tries.map((r) => r.bodyText)).size).toBe(1); // the same body every time
    for (const r of tries)
      expect(signatureValid(r.headers['x-cron-signature'], r.url, r.bodyText, HOOK_SECRET)).toBe(
        true,
      );
    const gaps = tries.slice(1).map((r, i) => r.receivedAt - tries[i]!.receivedAt);
    console.log(`retry gaps with Retry-After: 1 → ${gaps.join(' ms, ')} ms`);
    for (const g of gaps) expect(g).toBeGreaterThanOrEqual(950); // the server's Retry-After was honoured
    // the attempts in between were recorded
    const states = d.events
      .filter((n) => n.id === done.id)
      .map((n) => [n.status, n.attempts, n.lastStatus]);
    expect(states).toEqual([
      ['pending', 0, null],
      ['pending', 1, 503],
      ['pending', 2, 503],
      ['delivered', 3, 200],
    ]);
    // the metrics count it once recorded and once delivered, not per attempt
    const metrics = new DaemonMetrics(() => Date.now());
    for (const n of d.events) metrics.notification(n);
    const text = await metrics.registry.metrics();
    expect(text).toContain('cronix_notifications_recorded_total{notifier="chat",event="failed"} 1');
    expect(text).toContain(
      'cronix_notifications_ended_total{notifier="chat",event="failed",status="delivered"} 1',
    );
  }, 30_000);

  it('a dead notifier (never answers) leaves the runs as they would be', async () => {
    const dead = await startSink(() => ({ hang: true }));
    app.setScript(() => ({ status: 500 }));
    try {
      daemon = await startNotifyDaemon(
        notifyManifest(
          'shop',
          [
            {
              name: 'tick',
              schedule: '0 0 1 1 *',
              request: { url: `${app.url}/tick` },
              policy: { ...failing, concurrency: 'Allow' },
              notify: [{ to: 'dead', repeat_every_seconds: 1 }],
            },
          ],
          { dead: { type: 'webhook', url: `${dead.url}/hook` } },
        ),
        { timeoutMs: 30_000 },
      );
      const d = daemon;
      const t0 = Date.now();
      for (let i = 1; i <= 5; i++) {
        await d.scheduler.trigger('shop', 'tick');
        await d.waitEnded(i);
        if (i === 1) await dead.waitForRequests(1);
      }
      const elapsed = Date.now() - t0;
      // every run ended while the notifier had not answered a single delivery
      expect(dead.requests.every((r) => r.handlerEndPerf === undefined)).toBe(true);
      expect(d.ended.map((r) => [r.outcome, r.attempts])).toEqual(
        Array(5).fill(['retries_exhausted', 1]),
      );
      const durations = d.ended.map((r) => (r.endedAt ?? 0) - (r.startedAt ?? 0));
      console.log(
        `5 failing runs with a hanging notifier: ${elapsed} ms in all, run durations ${durations.join(', ')} ms`,
      );
      const pending = await d.store.listNotifications({ status: 'pending' });
      expect(pending.length).toBeGreaterThanOrEqual(1);
    } finally {
      await daemon?.stop();
      daemon = undefined;
      await dead.close();
    }
  }, 30_000);
});

describe('SMTP notifications', () => {
  it('sends a plain-text mail over STARTTLS with credentials from secret refs', async () => {
    const tlsDir = mkdtempSync(join(tmpdir(), 'cronix-smtp-'));
    const { key, cert } = selfSignedCert(tlsDir);
    const mails: {
      from: string;
      to: string[];
      data: string;
      secure: boolean;
      user: string | undefined;
    }[] = [];
    const server = new SMTPServer({
      key,
      cert,
      authMethods: ['PLAIN', 'LOGIN'],
      onAuth(auth, _session, cb) {
        if (auth.username === 'alerts' && auth.password === 'smtp-password-0123456789')
          cb(null, { user: auth.username });
        else cb(new Error('invalid credentials'));
      },
      onData(stream, session, cb) {
        let data = '';
        stream.on('data', (c: Buffer) => (data += c.toString()));
        stream.on('end', () => {
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            data,
            secure: session.secure,
            user: session.user as string | undefined,
          });
          cb();
        });
      },
      logger: false,
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
    app.setScript(() => ({ status: 500 }));
    try {
      daemon = await startNotifyDaemon(
        notifyManifest(
          'shop',
          [
            {
              name: 'mailer',
              schedule: '0 0 1 1 *',
              request: { url: `${app.url}/m` },
              policy: failing,
              notify: [{ to: 'ops' }],
            },
          ],
          {
            ops: {
              type: 'smtp',
              host: '127.0.0.1',
              port,
              from: 'cronix@example.test',
              to: ['ops@example.test', 'oncall@example.test'],
              username_ref: 'env:SMTP_USER',
              password_ref: 'env:SMTP_PASSWORD',
            },
          },
        ),
        {
          env: { SMTP_USER: 'alerts', SMTP_PASSWORD: 'smtp-password-0123456789' },
          smtpTls: { ca: cert },
        },
      );
      await daemon.scheduler.trigger('shop', 'mailer');
      const n = await daemon.waitNotification((x) => x.status !== 'pending');
      expect(n).toMatchObject({ status: 'delivered', notifierType: 'smtp', attempts: 1 });
      expect(mails).toHaveLength(1);
      const mail = mails[0]!;
      expect(mail.secure).toBe(true); // upgraded with STARTTLS before MAIL FROM
      expect(mail.user).toBe('alerts');
      expect(mail.from).toBe('cronix@example.test');
      expect(mail.to).toEqual(['ops@example.test', 'oncall@example.test']);
      expect(mail.data).toMatch(/^Subject: cronix: shop\/mailer failed: retries_exhausted/m);
      expect(mail.data).toMatch(/Content-Type: text\/plain/i);
      expect(mail.data.toLowerCase()).toContain(`x-cron-notification-id: ${n.id}`);
      expect(mail.data).not.toContain('smtp-password');
    } finally {
      await daemon?.stop();
      daemon = undefined;
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 30_000);
});
