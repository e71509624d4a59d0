/**
 * Idempotent manual triggers (SPEC §16): `POST …/trigger` with an `Idempotency-Key` returns the
 * first run that key of the job made — the same run and admission, even while that run is in
 * flight, never 409 — for {@link IDEMPOTENCY_TTL_MS}.
 *
 * Two layers. Calls with one key that arrive while the first is being decided join it in memory
 * (one promise per key, set before any await), so a burst of identical requests makes one run.
 * Once decided, the key is durable — written in the ledger group that records the run
 * (`verbs.ts`), so a crash keeps both or neither — and later calls, a restart or a new leader
 * find it in the store. Only the leader triggers (a standby forwards the key with the verb).
 */
import type { SchedulerCore, TriggerOptions, TriggerResult } from './core.js';
import { IDEMPOTENCY_TTL_MS } from './store/idempotency-types.js';
import * as verbs from './verbs.js';

/** See the module comment. */
export class IdempotentTriggers {
  private readonly inflight = new Map<string, Promise<TriggerResult>>();

  constructor(private readonly core: SchedulerCore) {}

  /** A manual trigger; with a key, the first run of that key of the job. */
  trigger(
    app: string,
    job: string,
    when: verbs.When,
    opts: TriggerOptions = {},
  ): Promise<TriggerResult> {
    const key = opts.idempotencyKey;
    if (key === undefined) return verbs.trigger(this.core, app, job, when, opts);
    const k = JSON.stringify([app, job, key]);
    const pending = this.inflight.get(k);
    if (pending) return pending.then((r) => this.current(r));
    const first = this.first(app, job, when, opts, key);
    this.inflight.set(k, first);
    const forget = (): void => void this.inflight.delete(k);
    first.then(forget, forget);
    return first;
  }

  private async first(
    app: string,
    job: string,
    when: verbs.When,
    opts: TriggerOptions,
    key: string,
  ): Promise<TriggerResult> {
    const { store, clock } = this.core.deps;
    const prior = await store.idempotentRun(app, job, key, clock.now() - IDEMPOTENCY_TTL_MS);
    if (prior) {
      const run = await store.getRun(prior.runId);
      if (run) return { run, admission: prior.admission };
      // its run was pruned (retention shorter than the key's life): the key starts afresh
    }
    return verbs.trigger(this.core, app, job, when, opts);
  }

  /** The first answer with its run as it is now. */
  private async current(r: TriggerResult): Promise<TriggerResult> {
    const run = await this.core.deps.store.getRun(r.run.id);
    return { run: run ?? r.run, admission: r.admission };
  }
}
