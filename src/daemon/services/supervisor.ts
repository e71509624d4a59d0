/**
 * The service supervisor (SPEC §17): every service of the manifests with its instances
 * (`instance.ts`), its crash-loop state and notifications, and the verbs on them.
 *
 * - **Start.** Built and started by the scheduler after start-up recovery, so the leftovers of a
 *   crashed daemon are stopped, and their rows ended `crashed`, before any instance starts.
 * - **Reload.** A new service starts; a removed one stops; a changed one restarts only the
 *   instances whose process would differ (`policy.planReload`), one at a time, each up (and ready,
 *   when it has a check) before the next; added instances start, dropped ones stop.
 * - **Stop.** Every instance at once, each with its graceful stop; `now` (a leader term that
 *   ended) kills them at once, since the lease is released right after.
 * - **Crash loop.** `crash_loop_exits` exits of one instance within the window: the service
 *   notifies `failed` once; once every looping instance stayed up `reset_after_seconds`,
 *   `recovered` (§12 grouping, through the daemon's notifications).
 */
import { effectiveService, type EffectiveService } from '../../contract/manifest/effective.js';
import type { Manifest } from '../../contract/manifest/types.js';
import type { NotifyTarget } from '../notify-plan.js';
import type { RunRecord } from '../store/types.js';
import { Instance, type InstanceDeps, type InstanceView } from './instance.js';
import { skippedRow } from './rows.js';
import {
  NO_CRASH_LOOP,
  onExit,
  onSettled,
  planReload,
  processShape,
  type CrashLoopEvent,
  type CrashLoopState,
} from './policy.js';

/** A service as the API shows it. */
export interface ServiceView {
  app: string;
  service: string;
  argv: string[];
  /** Instances wanted by the manifest. */
  instances: number;
  /** A crash loop is going on (notified `failed`, not yet `recovered`). */
  crashLoop: boolean;
  /** The readiness check, in words (`GET http://…/health`, `tcp 127.0.0.1:80{instance}`), or null. */
  ready: string | null;
  /** Each instance, by index. */
  instanceViews: InstanceView[];
}

/** The verbs of `cronix services`. */
export type ServiceAction = 'start' | 'stop' | 'restart';

/** One instance's answer to a verb. */
export interface ServiceActionResult {
  instance: number;
  /** `started`, `skipped` (a start of a running instance), `stopped` or `restarted`. */
  result: 'started' | 'skipped' | 'stopped' | 'restarted';
  /** The row recorded for a skipped start. */
  runId?: string;
}

/** What the supervisor needs: the instances' needs, and these. */
export interface SupervisorDeps extends Omit<InstanceDeps, 'app' | 'service' | 'index'> {
  /** A service's resolved `env_from_secrets` (empty when none). */
  secretEnvFor(app: string, service: string): Readonly<Record<string, string>>;
  /** Records a crash loop's `failed` or its end (`success` → `recovered` when a group is open). */
  notify?(kind: 'failed' | 'success', run: RunRecord, targets: readonly NotifyTarget[]): void;
}

/** A problem with a verb: no such service or instance. */
export class ServiceNotFound extends Error {
  override name = 'ServiceNotFound';
}

const keyOf = (app: string, service: string): string => `${app}/${service}`;

/** One service of the manifests. */
interface Entry {
  app: string;
  name: string;
  service: EffectiveService;
  secretEnv: Readonly<Record<string, string>>;
  targets: NotifyTarget[];
  shape: string;
  instances: Instance[];
  loop: CrashLoopState;
  /** The run of the latest exit or stable start (what a notification is about). */
  lastRun: RunRecord | null;
}

/** See the module comment. */
export class Supervisor {
  private readonly entries = new Map<string, Entry>();
  private stopping = false;
  /** Reloads and verbs one at a time: a restart sequence is never interleaved with another. */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: SupervisorDeps) {}

  /** Starts every service of the manifests. */
  start(manifests: readonly Manifest[]): void {
    for (const entry of this.build(manifests).values()) {
      this.entries.set(keyOf(entry.app, entry.name), entry);
      this.grow(entry, entry.service.instances);
    }
  }

  /** Applies new manifests (see the module comment); resolves once every change is made. */
  reload(manifests: readonly Manifest[]): Promise<void> {
    return this.serial(async () => {
      if (this.stopping) return;
      const next = this.build(manifests);
      const work: Promise<unknown>[] = [];
      for (const [key, old] of this.entries)
        if (!next.has(key)) {
          this.entries.delete(key);
          work.push(...old.instances.map((i) => i.retire('service removed')));
        }
      for (const [key, fresh] of next) {
        const old = this.entries.get(key);
        if (!old) {
          this.entries.set(key, fresh);
          this.grow(fresh, fresh.service.instances);
          continue;
        }
        const actions = planReload(
          { instances: old.service.instances, shape: old.shape },
          { instances: fresh.service.instances, shape: fresh.shape },
        );
        Object.assign(old, {
          service: fresh.service,
          secretEnv: fresh.secretEnv,
          targets: fresh.targets,
          shape: fresh.shape,
        });
        const dropped = old.instances.splice(fresh.service.instances);
        work.push(...dropped.map((i) => i.retire('instance removed by a reload')));
        for (const i of dropped) this.settle(old, i.index, false);
        this.grow(old, fresh.service.instances);
        // changed instances one at a time, each up before the next
        work.push(
          (async () => {
            for (const inst of old.instances)
              if (actions[inst.index] === 'restart' && !this.stopping)
                await inst.restart('service changed by a reload');
          })(),
        );
      }
      await Promise.all(work);
    });
  }

  /** Stops every instance (each with its graceful stop; `now`: SIGKILL at once). */
  async stop(now = false): Promise<void> {
    this.stopping = true;
    const all = [...this.entries.values()].flatMap((e) => e.instances);
    await Promise.all(all.map((i) => i.retire('daemon shutting down', now)));
  }

  /** Every service, sorted by app and name. */
  list(): ServiceView[] {
    return [...this.entries.values()]
      .sort((a, b) => (keyOf(a.app, a.name) < keyOf(b.app, b.name) ? -1 : 1))
      .map((e) => this.view(e));
  }

  /** One service, or null. */
  get(app: string, service: string): ServiceView | null {
    const e = this.entries.get(keyOf(app, service));
    return e ? this.view(e) : null;
  }

  /**
   * `start`, `stop` or `restart` of a service's instances (all, or `instance`). Restarts go one
   * instance at a time. A start of a running instance is `skipped` and recorded so.
   * @throws {ServiceNotFound}
   */
  act(
    action: ServiceAction,
    app: string,
    service: string,
    instance?: number,
  ): Promise<ServiceActionResult[]> {
    const e = this.entries.get(keyOf(app, service));
    if (!e) return Promise.reject(new ServiceNotFound(`no service ${app}/${service}`));
    const targets =
      instance === undefined ? e.instances : e.instances.filter((i) => i.index === instance);
    if (targets.length === 0)
      return Promise.reject(
        new ServiceNotFound(
          `service ${app}/${service} has no instance ${instance} (it has ${e.instances.length}: 0 to ${e.instances.length - 1})`,
        ),
      );
    return this.serial(async () => {
      const out: ServiceActionResult[] = [];
      if (action === 'stop') {
        await Promise.all(targets.map((i) => i.stop('stopped by an operator')));
        for (const i of targets) this.settle(e, i.index, false);
        return targets.map((i) => ({ instance: i.index, result: 'stopped' as const }));
      }
      for (const i of targets) {
        if (action === 'restart') {
          await i.restart('restarted by an operator');
          out.push({ instance: i.index, result: 'restarted' });
          continue;
        }
        if (i.up) {
          const run = await this.recordSkipped(e, i.index);
          out.push({ instance: i.index, result: 'skipped', ...(run ? { runId: run.id } : {}) });
        } else {
          await i.start();
          out.push({ instance: i.index, result: 'started' });
        }
      }
      return out;
    });
  }

  // ---- inside ----

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work, work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private build(manifests: readonly Manifest[]): Map<string, Entry> {
    const out = new Map<string, Entry>();
    for (const m of manifests)
      for (const [name, raw] of Object.entries(m.services ?? {})) {
        const service = effectiveService(raw);
        const secretEnv = this.deps.secretEnvFor(m.app, name);
        out.set(keyOf(m.app, name), {
          app: m.app,
          name,
          service,
          secretEnv,
          targets: service.notify.flatMap((n) => {
            const notifier = m.notifiers?.[n.to];
            return notifier
              ? [
                  {
                    notifier: n.to,
                    type: notifier.type,
                    on: n.on,
                    repeatMs: n.repeat_every_seconds * 1000,
                    slowAfterSeconds: n.slow_after_seconds,
                  },
                ]
              : [];
          }),
          shape: processShape(service, Object.values(secretEnv)),
          instances: [],
          loop: NO_CRASH_LOOP,
          lastRun: null,
        });
      }
    return out;
  }

  /** Adds and starts instances up to `count`. */
  private grow(e: Entry, count: number): void {
    if (this.stopping) return;
    for (let index = e.instances.length; index < count; index++) {
      const inst = new Instance(
        { ...this.deps, app: e.app, service: e.name, index },
        {
          definition: () => ({ service: e.service, secretEnv: e.secretEnv }),
          exited: (i, at, run) => {
            e.lastRun = run ?? e.lastRun;
            const step = onExit(e.loop, i, at, e.service.restart);
            e.loop = step.state;
            this.tell(e, step.event);
          },
          stable: (i, run) => {
            e.lastRun = run;
            this.settle(e, i, true);
          },
          looping: (i) => e.loop.looping.has(i),
          changed: (i) =>
            this.deps.events.emit('service', { app: e.app, service: e.name, instance: i }),
        },
      );
      e.instances.push(inst);
      inst.begin();
    }
  }

  /** Instance `i` is out of the crash loop (stable, or taken away). */
  private settle(e: Entry, i: number, healthy: boolean): void {
    const step = onSettled(e.loop, i, healthy);
    e.loop = step.state;
    this.tell(e, step.event);
  }

  private tell(e: Entry, event: CrashLoopEvent): void {
    if (event === null) return;
    this.deps.events.emit(event === 'failed' ? 'warning' : 'info', {
      msg:
        event === 'failed'
          ? `${e.app}/${e.name}: crash loop (${e.service.restart.crash_loop_exits} exits of one instance within ${e.service.restart.crash_loop_window_seconds} s); it keeps being restarted with backoff`
          : `${e.app}/${e.name}: recovered from its crash loop`,
    });
    this.deps.events.emit('service', { app: e.app, service: e.name, instance: null });
    if (e.lastRun && e.targets.length > 0)
      this.deps.notify?.(event === 'failed' ? 'failed' : 'success', e.lastRun, e.targets);
  }

  /** A manual start of a running instance: a `skipped` row, as a Forbid job's would be. */
  private async recordSkipped(e: Entry, index: number): Promise<RunRecord | null> {
    const now = this.deps.clock.now();
    const run = skippedRow(e.app, e.name, index, now);
    const [result] = await this.deps.ledger.submit([{ kind: 'insert', run }]);
    if (result?.kind !== 'recorded') return null;
    this.deps.events.emit('run-recorded', result.run);
    this.deps.events.emit('run-ended', result.run);
    return result.run;
  }

  private view(e: Entry): ServiceView {
    const r = e.service.ready;
    return {
      app: e.app,
      service: e.name,
      argv: [...e.service.argv],
      instances: e.service.instances,
      crashLoop: e.loop.looping.size > 0,
      ready: r === null ? null : r.http_get !== null ? `GET ${r.http_get}` : `tcp ${r.tcp ?? ''}`,
      instanceViews: e.instances.map((i) => i.view()),
    };
  }
}
