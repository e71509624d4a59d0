/**
 * The API's verbs in a cluster (SPEC §10 "API on any replica"): a standby
 * hands a verb to the leader through the store's command hand-off and answers
 * with the leader's answer; the leader takes the commands and carries them out
 * on its term's scheduler. Every wait is on the injected clock.
 *
 * **A failure answer is final.** A standby that has no answer within
 * {@link FORWARD_TIMEOUT_MS} withdraws the command (`pending → abandoned`); the
 * leader takes one (`pending → taken`) before carrying it out. Exactly one of the
 * two compare-and-sets wins, so:
 *
 * - withdrawn → `503 unavailable`: no leader will ever carry it out; retrying is safe;
 * - taken first → the standby waits for the leader's answer for as long as the
 *   term that took it lasts, and answers with it;
 * - the taker's term ended without answering → `409 conflict`, "in doubt": the
 *   verb may have been carried out before that term ended (nothing of that term
 *   can act after it), so the client looks before retrying;
 * - the store stops answering the standby after the hand-off → `409` "in doubt"
 *   once it has not answered for another {@link FORWARD_TIMEOUT_MS} (a failed
 *   hand-off itself is `503`: nothing was handed over).
 *
 * The leader withdraws itself a command older than {@link COMMAND_MAX_AGE_MS}
 * (its sender is gone), and prunes finished commands hourly.
 */
import type { Clock } from '../../fire/types.js';
import { SchedulerError, type TriggerOptions } from '../core.js';
import type { ServiceAction } from '../services/supervisor.js';
import type { Coordination, Fence } from '../store/coordination.js';
import type { BackfillSpec } from '../store/types.js';
import type { FreezeSpec } from '../store/freeze-types.js';
import type { SkipWhat } from '../verbs.js';
import type { TermScheduler } from './term.js';
import { nap } from './timers.js';

/** How long a standby waits for the leader to take a forwarded verb before withdrawing it. */
export const FORWARD_TIMEOUT_MS = 5000;
/** A pending command older than this is withdrawn by the leader, not carried out. */
export const COMMAND_MAX_AGE_MS = 10_000;
/** Finished commands are kept this long (diagnostics), then pruned. */
export const COMMAND_RETENTION_MS = 3_600_000;
/** How often the leader prunes the commands. */
export const COMMAND_PRUNE_EVERY_MS = 3_600_000;
/** A waiting standby looks at its command at least this often (a lost wake-up costs this much). */
const POLL_MS = 250;
/** Most commands the leader reads per pass. */
const BATCH = 100;

/** An API mutation, as forwarded. */
export type Verb =
  | {
      kind: 'trigger';
      app: string;
      job: string;
      when: { at?: number; afterSeconds?: number };
      opts?: TriggerOptions;
    }
  | { kind: 'cancel'; runId: string }
  | { kind: 'replay'; runId: string }
  | {
      kind: 'pause';
      app: string;
      job: string;
      paused: boolean;
      note?: { reason: string | null; by: string };
    }
  | { kind: 'freeze'; spec: FreezeSpec; by: string }
  | { kind: 'skip'; app: string; job: string; what: SkipWhat; by: string }
  | { kind: 'unfreeze'; app: string | null; job: string | null; by: string }
  | { kind: 'backfill'; spec: BackfillSpec; by: string }
  | { kind: 'backfill-cancel'; id: string; by: string }
  | {
      kind: 'service';
      action: ServiceAction;
      app: string;
      service: string;
      instance?: number;
    };

/** The leader's answer, as stored with the command. */
type VerbResult = { ok: unknown } | { error: { code: SchedulerError['code']; message: string } };

/** The leader's current term, as the hand-off needs it. */
export interface CommandTerm {
  fence: Fence;
  scheduler: TermScheduler;
  /** Still the replica's current, started term. */
  current(): boolean;
}

/** Carries out a verb on a term's scheduler. */
export async function carryOut(s: TermScheduler, v: Verb): Promise<unknown> {
  switch (v.kind) {
    case 'trigger':
      return s.trigger(v.app, v.job, v.when, v.opts);
    case 'cancel':
      return s.cancel(v.runId);
    case 'replay':
      return s.replay(v.runId);
    case 'pause':
      await s.setPaused(v.app, v.job, v.paused, v.note);
      return { app: v.app, job: v.job, paused: v.paused };
    case 'freeze':
      if (!s.freeze) throw new SchedulerError('not_found', 'freezes are not supported');
      return s.freeze(v.spec, v.by);
    case 'skip':
      if (!s.skip) throw new SchedulerError('not_found', 'skips are not supported');
      return s.skip(v.app, v.job, v.what, v.by);
    case 'unfreeze':
      if (!s.unfreeze) throw new SchedulerError('not_found', 'freezes are not supported');
      return s.unfreeze(v.app, v.job, v.by);
    case 'backfill':
      return s.backfill(v.spec, v.by);
    case 'backfill-cancel':
      return s.cancelBackfill(v.id, v.by);
    case 'service':
      if (!s.serviceAction)
        throw new SchedulerError('not_found', `no service ${v.app}/${v.service}`);
      return s.serviceAction(v.action, v.app, v.service, v.instance);
  }
}

/** Both sides of the command hand-off for one replica. */
export class Forwarder {
  /** Standby: wake-ups of the commands waited for, by id. */
  private readonly waiting = new Map<number, () => void>();
  /** Leader: results not yet stored (the store failed); stored again on the next pass. */
  private readonly unanswered = new Map<number, VerbResult>();
  private pass: Promise<void> = Promise.resolve();
  private lastPrune = -Infinity;

  constructor(private readonly deps: { coordination: Coordination; clock: Clock }) {}

  // ---- standby ----

  /** Hands `verb` to the leader and returns its answer (see the module comment). */
  async forward(verb: Verb): Promise<unknown> {
    const { coordination: c, clock } = this.deps;
    let id: number;
    try {
      id = await c.enqueueCommand(verb.kind, verb);
    } catch (err) {
      throw new SchedulerError(
        'unavailable',
        `could not hand the request to the leader: ${(err as Error).message}; try again`,
      );
    }
    let wake = (): void => undefined;
    const woken = (): Promise<void> => new Promise((resolve) => (wake = resolve));
    this.waiting.set(id, () => wake());
    const deadline = clock.now() + FORWARD_TIMEOUT_MS;
    // past this, a store that does not answer leaves the request in doubt
    const giveUp = deadline + FORWARD_TIMEOUT_MS;
    const unknown = (): never => {
      throw inDoubt(
        `the store did not answer whether a leader took the request (command ${id}); it may be carried out`,
      );
    };
    try {
      for (;;) {
        const next = woken();
        // undefined: the store did not answer; null: no such command (it can no longer be taken)
        const status = await c.commandStatus(id).catch(() => undefined);
        if (status?.state === 'done') return answer(status.result as VerbResult);
        if (status === null || status?.state === 'abandoned') throw notCarriedOut();
        const now = clock.now();
        if (now >= deadline && (status === undefined || status.state === 'pending')) {
          const withdrawn = await c.withdrawCommand(id).catch(() => undefined);
          if (withdrawn === true) throw notCarriedOut();
          if (withdrawn === false) continue; // taken, or done, meanwhile: look again
          if (now >= giveUp) unknown();
        } else if (now >= deadline && status !== undefined) {
          const leads = await this.leads(status.takenEpoch).catch(() => undefined);
          if (leads === false) {
            const last = await c.commandStatus(id).catch(() => undefined);
            if (last?.state === 'done') return answer(last.result as VerbResult);
            throw inDoubt(
              `the leader of epoch ${status.takenEpoch} took the request (command ${id}) but its term ended before it answered; it may have been carried out`,
            );
          }
          if (leads === undefined && now >= giveUp) unknown();
        }
        // woken by the leader's answer, or a look every POLL_MS if wake-ups are lost
        await nap(clock, now < deadline ? Math.min(POLL_MS, deadline - now) : POLL_MS, next);
      }
    } finally {
      this.waiting.delete(id);
    }
  }

  /** The feed says command `id` is done: its waiter looks now. */
  done(id: number): void {
    this.waiting.get(id)?.();
  }

  /** True while term `epoch` holds the live lease. */
  private async leads(epoch: number | null): Promise<boolean> {
    const lease = await this.deps.coordination.readLease();
    return lease !== null && lease.epoch === epoch && lease.expiresAt > lease.storeNow;
  }

  // ---- leader ----

  /**
   * Takes the pending commands and carries them out on `term`'s scheduler, each
   * as soon as taken (a slow one, such as a cancel waiting for its run to end,
   * holds up neither the others nor the lease). One pass at a time.
   */
  runPending(term: CommandTerm): Promise<void> {
    this.pass = this.pass.then(() => this.takeAll(term)).catch(() => undefined);
    return this.pass;
  }

  private async takeAll(term: CommandTerm): Promise<void> {
    const c = this.deps.coordination;
    for (const [id, result] of [...this.unanswered]) await this.complete(id, result);
    for (const cmd of await c.pendingCommands(BATCH)) {
      if (!term.current()) return;
      if (cmd.ageMs > COMMAND_MAX_AGE_MS) {
        await c.withdrawCommand(cmd.id); // its sender gave up long ago
        continue;
      }
      if (!(await c.takeCommand(cmd.id, term.fence))) continue; // withdrawn, or not our lease
      void carryOut(term.scheduler, cmd.payload as Verb)
        .then(
          (ok): VerbResult => ({ ok }),
          (err: Error): VerbResult => ({
            error: {
              code: err instanceof SchedulerError ? err.code : 'unavailable',
              message: err.message,
            },
          }),
        )
        .then((result) => this.complete(cmd.id, result));
    }
  }

  private async complete(id: number, result: VerbResult): Promise<void> {
    try {
      await this.deps.coordination.completeCommand(id, result);
      this.unanswered.delete(id);
    } catch {
      this.unanswered.set(id, result);
    }
  }

  /** Prunes the commands if the last pruning is {@link COMMAND_PRUNE_EVERY_MS} old; returns how many. */
  async maybePrune(): Promise<number> {
    const now = this.deps.clock.now();
    if (Math.abs(now - this.lastPrune) < COMMAND_PRUNE_EVERY_MS) return 0;
    this.lastPrune = now;
    return this.deps.coordination.pruneCommands(COMMAND_RETENTION_MS);
  }
}

function answer(result: VerbResult): unknown {
  if ('error' in result) throw new SchedulerError(result.error.code, result.error.message);
  return result.ok;
}

const inDoubt = (why: string): SchedulerError =>
  new SchedulerError('conflict', `in doubt: ${why} — look (GET /api/v1/runs) before trying again`);

const notCarriedOut = (): SchedulerError =>
  new SchedulerError(
    'unavailable',
    `no leader took the request within ${FORWARD_TIMEOUT_MS / 1000} s; it was withdrawn and will not be carried out — try again (GET /api/v1/cluster shows the leader)`,
  );
