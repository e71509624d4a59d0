/**
 * The shim's own notifications (SPEC §12): `cronix trigger` tells the job's
 * **webhook** notifiers about its fire — `failed` (app rejected, retries
 * exhausted, internal error once the spec is loaded), `recovered` (the first
 * success after a failure) and `slow` (still running after `slow_after_seconds`)
 * — with the daemon's grouping, its state kept beside the run state in the
 * state dir (`<state-dir>/<app>.<job>/notify.json`).
 *
 * Best effort and bounded: one attempt per notification, all of them within
 * {@link SHIM_NOTIFY_BUDGET_MS}; failures are logged (`notify` lines, after the
 * terminal line) and never change the exit code. SMTP notifiers and `missed`
 * are the daemon's (the shim has no queue and sees no missed fires).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { effectiveNotify } from '../contract/manifest/effective.js';
import type { Job, Notifier, NotifyEvent } from '../contract/manifest/types.js';
import { writeFileAtomic } from '../io/atomic.js';
import { CLOSED, onProblem, onSuccess, type GroupState } from '../notify/group.js';
import { notifyPayload, type RunFacts } from '../notify/message.js';
import type { DeliveryResult } from '../notify/types.js';
import { webhookSender } from '../notify/webhook.js';
import { resolveSecretRefs, type SecretResolverDeps } from '../secrets/resolve.js';
import { uuidv7 } from '../fire/ids.js';
import { SHIM_NOTIFY_BUDGET_MS } from './limits.js';

/** What happened to the fire, as far as notifications care. */
export type ShimEvent = 'failed' | 'success' | null;

/** One webhook target of the job. */
interface Target {
  name: string;
  notifier: Notifier & { type: 'webhook' };
  on: readonly NotifyEvent[];
  repeatMs: number;
  slowAfterSeconds: number;
}

type State = Record<string, GroupState>;

/** A log line of the notifications (the shim's logger). */
export type NotifyLog = (
  level: 'info' | 'warn',
  msg: string,
  fields: Record<string, unknown>,
) => void;

/** The notifications of one fire. */
export class ShimNotifications {
  private readonly targets: Target[];
  private readonly sends: Promise<void>[] = [];
  private slowTimers: NodeJS.Timeout[] = [];

  constructor(
    private readonly app: string,
    job: Job,
    notifiers: Readonly<Record<string, Notifier>>,
    private readonly stateDir: string,
    private readonly env: SecretResolverDeps['env'],
    private readonly log: NotifyLog,
    private readonly now: () => number = Date.now,
  ) {
    this.targets = effectiveNotify(job).flatMap((n) => {
      const notifier = notifiers[n.to];
      return notifier?.type === 'webhook'
        ? [
            {
              name: n.to,
              notifier,
              on: n.on,
              repeatMs: n.repeat_every_seconds * 1000,
              slowAfterSeconds: n.slow_after_seconds,
            },
          ]
        : [];
    });
    this.jobName = job.name;
  }

  private readonly jobName: string;

  /** True when the job has webhook notifiers. */
  get active(): boolean {
    return this.targets.length > 0;
  }

  /** The fire started: arms the slow timers (`facts()` describes the run when one fires). */
  started(facts: () => RunFacts): void {
    for (const t of this.targets) {
      if (!t.on.includes('slow')) continue;
      const timer = setTimeout(() => this.send(t, 'slow', facts(), 1), t.slowAfterSeconds * 1000);
      timer.unref();
      this.slowTimers.push(timer);
    }
  }

  /**
   * The fire ended: decides and sends `failed`/`recovered`, then waits for every send of this
   * fire, at most {@link SHIM_NOTIFY_BUDGET_MS}. Never throws.
   */
  async finished(event: ShimEvent, facts: RunFacts): Promise<void> {
    for (const t of this.slowTimers) clearTimeout(t);
    this.slowTimers = [];
    try {
      if (event !== null) {
        const state = this.readState();
        for (const t of this.targets) {
          const key = `${t.name}/failed`;
          if (event === 'failed') {
            const d = onProblem(
              state[key] ?? CLOSED,
              this.now(),
              t.repeatMs,
              t.on.includes('failed'),
            );
            state[key] = d.next;
            if (d.send) this.send(t, 'failed', facts, d.count);
          } else {
            const r = onSuccess([state[key] ?? CLOSED], t.on.includes('recovered'));
            if (r.recovered) delete state[key];
            if (r.send) this.send(t, 'recovered', facts, r.count);
          }
        }
        this.writeState(state);
      }
    } catch (err) {
      this.log('warn', `notifications: ${(err as Error).message}`, {});
    }
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(this.sends),
      new Promise((r) => (timer = setTimeout(r, SHIM_NOTIFY_BUDGET_MS))),
    ]);
    clearTimeout(timer);
  }

  private send(t: Target, event: NotifyEvent, facts: RunFacts, count: number): void {
    const payload = notifyPayload(event, this.app, this.jobName, facts, count, {
      slowAfterSeconds: t.slowAfterSeconds,
    });
    const id = uuidv7(this.now());
    const p = (async (): Promise<void> => {
      let url = t.notifier.url;
      if (t.notifier.url_ref !== undefined)
        url = resolveSecretRefs([t.notifier.url_ref], { env: this.env }).secrets[0];
      const secrets = resolveSecretRefs(t.notifier.secret_refs ?? [], { env: this.env }).secrets;
      let res: DeliveryResult;
      if (url === undefined)
        res = {
          ok: false,
          permanent: true,
          status: null,
          error: 'url_ref did not resolve',
          retryAfterMs: null,
        };
      else if ((t.notifier.secret_refs ?? []).length > 0 && secrets.length === 0)
        res = {
          ok: false,
          permanent: true,
          status: null,
          error: 'no secret_refs resolved',
          retryAfterMs: null,
        };
      else
        res = await webhookSender({
          url,
          secrets,
          timeoutMs: SHIM_NOTIFY_BUDGET_MS,
          now: this.now,
        })(JSON.stringify(payload), id);
      const fields = {
        notify_event: event,
        notifier: t.name,
        notification_id: id,
        ...(res.status !== null ? { status: res.status } : {}),
        ...(res.ok ? {} : { err: res.error }),
      };
      if (res.ok) this.log('info', `notification ${event} sent to ${t.name}`, fields);
      else this.log('warn', `notification ${event} to ${t.name} failed: ${res.error}`, fields);
    })().catch((err: unknown) => {
      this.log('warn', `notification ${event} to ${t.name} failed: ${(err as Error).message}`, {});
    });
    this.sends.push(p);
  }

  private statePath(): string {
    return join(this.stateDir, 'notify.json');
  }

  private readState(): State {
    try {
      const raw = JSON.parse(readFileSync(this.statePath(), 'utf8')) as unknown;
      return typeof raw === 'object' && raw !== null ? (raw as State) : {};
    } catch {
      return {};
    }
  }

  private writeState(state: State): void {
    writeFileAtomic(this.statePath(), `${JSON.stringify(state)}\n`);
  }
}
