/**
 * Notifications end to end in one process: the real Scheduler on a real SQLite
 * ledger and the system clock, the real HTTP transport to a scripted app sink,
 * and real notifiers (webhook to a sink, SMTP to an `smtp-server`).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConnectionOptions } from 'node:tls';
import { parseManifest } from '../../src/contract/manifest/index.js';
import type { Manifest } from '../../src/contract/manifest/types.js';
import { Scheduler } from '../../src/daemon/scheduler.js';
import { openSqliteStore } from '../../src/daemon/store/sqlite.js';
import type { NotificationRecord, RunRecord, Store } from '../../src/daemon/store/types.js';
import { systemClock } from '../../src/fire/clock.js';
import { createHttpTransport } from '../../src/fire/http-transport.js';
import { resolveNotifiers, type ResolvedNotifier } from '../../src/notify/resolve.js';

/** The secret the webhook notifier signs with (a `raw:` ref). */
export const HOOK_SECRET = 'notify-secret-0123456789';

/** A manifest of app `app` with `jobs` and `notifiers`; throws on a validation error. */
export function notifyManifest(
  app: string,
  jobs: Record<string, unknown>[],
  notifiers: Record<string, unknown>,
): Manifest {
  const r = parseManifest({
    version: 1,
    app,
    jobs: jobs.map((j) => ({ auth: { secret_refs: ['raw:test-secret-0123456789'] }, ...j })),
    notifiers,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return r.manifest;
}

/** A running in-process daemon with notifications. */
export interface NotifyDaemon {
  scheduler: Scheduler;
  store: Store;
  /** Every `notification` event (recorded, then each attempt), in order. */
  events: NotificationRecord[];
  ended: RunRecord[];
  /** Resolves with the first notification event matching `test`. */
  waitNotification(
    test: (n: NotificationRecord) => boolean,
    timeoutMs?: number,
  ): Promise<NotificationRecord>;
  waitEnded(n: number, timeoutMs?: number): Promise<RunRecord[]>;
  stop(): Promise<void>;
}

/** Starts a scheduler on a fresh ledger with the manifest's notifiers resolved. */
export async function startNotifyDaemon(
  m: Manifest,
  o: { env?: Record<string, string>; smtpTls?: ConnectionOptions; timeoutMs?: number } = {},
): Promise<NotifyDaemon> {
  const resolved = resolveNotifiers(`app ${m.app}`, m.notifiers, {
    env: o.env ?? {},
    ...(o.smtpTls ? { smtpTls: o.smtpTls } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
  });
  if (!resolved.ok) throw new Error(resolved.errors.join('\n'));
  const notifiers: ReadonlyMap<string, ResolvedNotifier> = resolved.notifiers;
  const dir = mkdtempSync(join(tmpdir(), 'cronix-notify-'));
  const store = await openSqliteStore(join(dir, 'ledger.sqlite'));
  const transport = createHttpTransport({ keepAlive: true });
  const scheduler = new Scheduler({
    store,
    clock: systemClock,
    transport,
    secretsFor: () => ['test-secret-0123456789'],
    notifiersOf: (app) => (app === m.app ? notifiers : undefined),
  });
  const events: NotificationRecord[] = [];
  const ended: RunRecord[] = [];
  const checks = new Set<() => void>();
  scheduler.events.on('notification', (n) => {
    events.push(n);
    for (const c of [...checks]) c();
  });
  scheduler.events.on('run-ended', (r) => {
    ended.push(r);
    for (const c of [...checks]) c();
  });
  const waitFor = <T>(get: () => T | undefined, timeoutMs: number, what: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const v = get();
        if (v === undefined) return;
        checks.delete(check);
        clearTimeout(timer);
        resolve(v);
      };
      const timer = setTimeout(() => {
        checks.delete(check);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      checks.add(check);
      check();
    });
  await scheduler.start([m]);
  return {
    scheduler,
    store,
    events,
    ended,
    waitNotification: (test, timeoutMs = 15_000) =>
      waitFor(() => events.find(test), timeoutMs, 'a notification'),
    waitEnded: (n, timeoutMs = 15_000) =>
      waitFor(() => (ended.length >= n ? ended : undefined), timeoutMs, `${n} ended runs`),
    async stop() {
      await scheduler.stop(2000);
      await store.close();
      await transport.close?.();
    },
  };
}

/**
 * Checks `X-Cron-Signature` the way a receiver would, written here from SPEC §4 (not the
 * project's verifier): HMAC-SHA256 over `<t>.POST.<path>.<body>`.
 */
export function signatureValid(
  header: unknown,
  path: string,
  body: string,
  secret: string,
): boolean {
  if (typeof header !== 'string') return false;
  const parts = new Map(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!t || !v1) return false;
  const mac = createHmac('sha256', secret).update(`${t}.POST.${path}.${body}`).digest();
  const got = Buffer.from(v1, 'hex');
  return (
    got.length === mac.length &&
    timingSafeEqual(got, mac) &&
    Math.abs(Date.now() / 1000 - Number(t)) < 300
  );
}
