/**
 * The systemd backend (SPEC §6): per (app, job, schedule index) a `cronix-<app>_<job>-<index>`
 * `.service` + `.timer` pair in `--systemd-unit-dir` (default `/etc/systemd/system`), each
 * file carrying the ownership marker of `systemd-units.ts`. Files without the marker, or whose
 * marker does not name the file, are foreign: never read as ours, changed or deleted.
 *
 * `apply` writes only files whose content changed (atomically, one rename per file) and runs
 * `systemctl` only when something changed: `disable --now` for deleted timers before their
 * files go, then `daemon-reload`, `enable --now` for new timers and `try-restart` for changed
 * ones. Where systemd is not running (no `/run/systemd/system`, or no `systemctl`), it still
 * writes the files and leaves a message in {@link SystemdBackend.notices} for the CLI to print.
 * See docs/backends/systemd.md.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { attemptStopSeconds } from '../../contract/manifest/effective.js';
import { parseSchedule } from '../../contract/schedule/index.js';
import {
  BackendWriteError,
  entryId,
  type AdoptReport,
  type Backend,
  type ChangeSet,
  type DesiredEntry,
  type OwnedEntry,
} from '../backend.js';
import type { BackendOptions } from './options.js';
import { accuracySec, toOnCalendar } from './systemd-calendar.js';
import {
  foreignInTheWay,
  prepareUnitDir,
  readUnit,
  removeUnit,
  scanPublicUnits,
  scanUnitDir,
  writeUnit,
} from './systemd-files.js';
import { timerPolicy } from './systemd-policy.js';
import {
  detectSystemd,
  execSystemctl,
  noSystemdNotice,
  runSystemctl,
  type SystemctlRunner,
} from './systemd-systemctl.js';
import {
  bodySum,
  execLine,
  renderService,
  renderTimer,
  unitFileNames,
  unitName,
  unitSetting,
  type ParsedUnit,
} from './systemd-units.js';

export { detectSystemd, execSystemctl } from './systemd-systemctl.js';
export type { SystemctlResult, SystemctlRunner } from './systemd-systemctl.js';

/** Default `--systemd-unit-dir`. */
export const DEFAULT_UNIT_DIR = '/etc/systemd/system';

/** Options of {@link createSystemdBackend}: the CLI's, plus seams for tests. */
export type SystemdBackendOptions = Pick<
  BackendOptions,
  'triggerCommand' | 'shimArgs' | 'systemdUnitDir'
> & {
  /** The `systemctl` runner; default runs the real one with `execFile`. */
  systemctl?: SystemctlRunner;
  /**
   * Whether systemd manages this host, so `systemctl` calls make sense. Default:
   * `/run/systemd/system` exists (sd_booted(3)) and `systemctl` is on PATH.
   */
  systemdRunning?: () => boolean;
  /** Clock (epoch ms) for the DST horizon; default `Date.now`. */
  now?: () => number;
  /** The host's tz database, which systemd reads zones from; default `/usr/share/zoneinfo`. */
  zoneInfoDir?: string;
};

/** The systemd backend, with the messages the CLI should print after `apply`. */
export interface SystemdBackend extends Backend {
  /** The unit directory. */
  readonly target: string;
  /** Human-readable messages (for example "systemd is not running here"); append-only. */
  readonly notices: string[];
}

class SystemdTimerBackend implements SystemdBackend {
  readonly name = 'systemd' as const;
  readonly target: string;
  readonly notices: string[] = [];
  private readonly runner: SystemctlRunner;
  private readonly running: () => boolean;
  private readonly now: () => number;
  private readonly zoneInfoDir: string;
  private readonly userMode: boolean;

  constructor(private readonly options: SystemdBackendOptions) {
    this.target = options.systemdUnitDir ?? DEFAULT_UNIT_DIR;
    this.runner = options.systemctl ?? execSystemctl;
    this.running = options.systemdRunning ?? detectSystemd;
    this.now = options.now ?? Date.now;
    this.zoneInfoDir = options.zoneInfoDir ?? '/usr/share/zoneinfo';
    this.userMode = /\/systemd\/user\/?$/.test(this.target);
  }

  /** See {@link Backend.triggerLine}. */
  get triggerLine(): string {
    return this.execStartOf('APP', 'JOB').replace('APP.JOB', '<app>.<job>');
  }

  private execStartOf(app: string, job: string): string {
    return execLine([
      ...this.options.triggerCommand,
      'trigger',
      `${app}.${job}`,
      ...this.options.shimArgs,
    ]);
  }

  /** Both files of an entry, or every reason systemd cannot express it. */
  private render(entry: DesiredEntry): { service: string; timer: string } | { reasons: string[] } {
    const parsed = parseSchedule(entry.schedule);
    if (!parsed.ok) return { reasons: [`invalid schedule: ${parsed.error}`] };
    const zone = entry.spec.timezone;
    const now = this.now();
    const reasons: string[] = [];
    const calendar = toOnCalendar(parsed.schedule, zone, { now });
    if (!calendar.ok) reasons.push(calendar.reason);
    else if (
      calendar.lines.some((l) => l.endsWith(` ${zone}`)) &&
      zone !== 'UTC' &&
      !existsSync(join(this.zoneInfoDir, zone))
    ) {
      reasons.push(
        `time zone ${zone} is missing from this host's tz database (${join(this.zoneInfoDir, zone)}), ` +
          'so systemd would reject the timer; install or update tzdata',
      );
    }
    const policy = timerPolicy(entry.spec, parsed.schedule, now);
    if (!policy.ok) reasons.push(...policy.reasons);
    const blocked = foreignInTheWay(this.target, entry);
    if (blocked !== null) reasons.push(blocked);
    if (!calendar.ok || !policy.ok || reasons.length > 0) return { reasons };
    const input = {
      id: entry.id,
      app: entry.app,
      job: entry.job,
      scheduleIndex: entry.scheduleIndex,
      hash: entry.hash,
      schedule: entry.schedule,
      timezone: zone,
      policy: entry.spec.policy,
      stopSeconds: attemptStopSeconds(entry.spec),
      execStart: this.execStartOf(entry.app, entry.job),
      calendar: calendar.lines,
      persistent: policy.timer.persistent,
      randomizedDelaySeconds: policy.timer.randomizedDelaySeconds,
      accuracy: accuracySec(parsed.schedule),
    };
    return { service: renderService(input), timer: renderTimer(input) };
  }

  refuse(entry: DesiredEntry): string[] {
    const r = this.render(entry);
    return 'reasons' in r ? r.reasons : [];
  }

  async list(app?: string): Promise<OwnedEntry[]> {
    const out: OwnedEntry[] = [];
    for (const [stem, { service, timer }] of scanUnitDir(this.target)) {
      const marker = (timer ?? service)?.marker;
      if (!marker || (app !== undefined && marker.app !== app)) continue;
      const entry: OwnedEntry = {
        id: entryId(marker.app, marker.job, marker.scheduleIndex),
        app: marker.app,
        job: marker.job,
        scheduleIndex: marker.scheduleIndex,
        hash: marker.hash,
      };
      const current = unitName(marker.app, marker.job, marker.scheduleIndex);
      const modified =
        stem !== current
          ? `old unit name ${stem} (renamed to ${current})`
          : this.modifiedReason(service, timer, marker.app, marker.job);
      if (modified !== undefined) entry.modified = modified;
      out.push(entry);
    }
    return out;
  }

  private modifiedReason(
    service: ParsedUnit | undefined,
    timer: ParsedUnit | undefined,
    app: string,
    job: string,
  ): string | undefined {
    if (!service) return 'service file missing';
    if (!timer) return 'timer file missing';
    if (service.marker?.hash !== timer.marker?.hash) return 'service and timer markers disagree';
    for (const unit of [service, timer]) {
      if (unit.marker?.sum !== bodySum(unit.body)) return 'edited by hand';
    }
    if (unitSetting(service.body, 'ExecStart') !== this.execStartOf(app, job)) {
      return 'installed with another --trigger-bin or shim flags';
    }
    return undefined;
  }

  private async systemctl(args: string[]): Promise<void> {
    await runSystemctl(this.runner, this.userMode ? ['--user', ...args] : args);
  }

  async apply(changes: ChangeSet): Promise<void> {
    await this.applyWith(changes, []);
  }

  /**
   * Adopts the public reconciler's units in two steps, so that at every moment exactly one timer
   * fires each entry and, from the first step on, it runs this cronix: (1) each public `.service`
   * is replaced in place (one rename) by ours and systemd reloaded — their timer now starts our
   * trigger; (2) the usual rename to `cronix-<app>_<job>-<idx>` (ours enabled before theirs is
   * disabled; both run our shim, whose lock and run key make a fire in that instant one run).
   */
  async adopt(
    desired: readonly DesiredEntry[],
    app: string,
    dryRun: boolean,
  ): Promise<AdoptReport> {
    const publicUnits = scanPublicUnits(this.target, app);
    const wanted = new Map(desired.map((d) => [`${d.job}/${d.scheduleIndex}`, d]));
    const report: AdoptReport = { adopted: [], removed: [] };
    const matched: { entry: DesiredEntry; name: string }[] = [];
    const gone: string[] = [];
    for (const u of publicUnits) {
      const d = wanted.get(`${u.job}/${u.scheduleIndex}`);
      if (d !== undefined) {
        matched.push({ entry: d, name: u.name });
        report.adopted.push(d.id);
      } else {
        gone.push(u.name);
        report.removed.push(entryId(u.app, u.job, u.scheduleIndex));
      }
    }
    if (dryRun || publicUnits.length === 0) return report;
    prepareUnitDir(this.target);
    const services = matched.map((m) => {
      const r = this.render(m.entry);
      if ('reasons' in r) throw new BackendWriteError(`${m.entry.id}: ${r.reasons.join('; ')}`);
      return { name: m.name, service: r.service };
    });
    for (const m of services) writeUnit(this.target, unitFileNames(m.name).service, m.service);
    if (services.length > 0 && this.running()) await this.systemctl(['daemon-reload']);
    await this.applyWith({ deletes: [], updates: matched.map((m) => m.entry), creates: [] }, gone);
    return report;
  }

  /**
   * Applies `changes`, then retires the units named in `retire` plus any of ours still under
   * the old unit name: the replacement timer is enabled before the retired one is disabled, so
   * at no moment is neither installed (a fire in the overlap runs the same trigger twice, which
   * the shim's lock and run key turn into one run).
   */
  private async applyWith(changes: ChangeSet, retire: readonly string[]): Promise<void> {
    const { deletes, updates, creates } = changes;
    if (deletes.length + updates.length + creates.length === 0 && retire.length === 0) return;

    // render everything first: a refusal here means nothing is written
    const writes = new Map<string, string>();
    for (const entry of [...updates, ...creates]) {
      const r = this.render(entry);
      if ('reasons' in r) throw new BackendWriteError(`${entry.id}: ${r.reasons.join('; ')}`);
      const names = unitFileNames(unitName(entry.app, entry.job, entry.scheduleIndex));
      writes.set(names.service, r.service);
      writes.set(names.timer, r.timer);
    }
    prepareUnitDir(this.target);

    // which files differ, and which of ours go
    const changed = [...writes].filter(([name, text]) => readUnit(this.target, name) !== text);
    const ours = scanUnitDir(this.target);
    const key = (app: string, job: string, index: number): string => `${app}/${job}/${index}`;
    const deleting = new Set(deletes.map((d) => key(d.app, d.job, d.scheduleIndex)));
    const upserting = new Set(
      [...updates, ...creates].map((e) => key(e.app, e.job, e.scheduleIndex)),
    );
    const removals: string[] = [];
    const stopTimers: string[] = [];
    const retiring = new Set(retire);
    for (const [stem, slot] of ours) {
      const owner = (slot.timer ?? slot.service)?.marker;
      if (!owner) continue;
      const k = key(owner.app, owner.job, owner.scheduleIndex);
      const names = unitFileNames(stem);
      if (deleting.has(k)) {
        if (slot.timer) stopTimers.push(names.timer);
        removals.push(
          ...(slot.timer ? [names.timer] : []),
          ...(slot.service ? [names.service] : []),
        );
      } else if (upserting.has(k) && stem !== unitName(owner.app, owner.job, owner.scheduleIndex)) {
        retiring.add(stem); // the old, ambiguous name: replaced by the new one
      }
    }
    if (changed.length === 0 && removals.length === 0 && retiring.size === 0) return;

    const timerExisted = new Set(
      [...writes.keys()].filter((n) => n.endsWith('.timer') && readUnit(this.target, n) !== null),
    );
    const running = this.running();
    if (running && stopTimers.length > 0) await this.systemctl(['disable', '--now', ...stopTimers]);
    for (const name of removals) removeUnit(this.target, name);
    for (const [name, text] of changed) writeUnit(this.target, name, text);

    const timersOf = (entries: readonly DesiredEntry[]): string[] =>
      entries.map((e) => unitFileNames(unitName(e.app, e.job, e.scheduleIndex)).timer);
    const changedNames = new Set(changed.map(([name]) => name));
    const allTimers = timersOf([...updates, ...creates]);
    const created = allTimers.filter((n) => !timerExisted.has(n));
    const restarted = allTimers.filter((n) => timerExisted.has(n) && changedNames.has(n));
    const retired = [...retiring].map((stem) => unitFileNames(stem));
    const retireFiles = (): void => {
      for (const r of retired) {
        removeUnit(this.target, r.timer);
        removeUnit(this.target, r.service);
      }
    };
    if (!running) {
      retireFiles();
      this.notices.push(
        noSystemdNotice(
          this.target,
          created,
          [...stopTimers, ...retired.map((r) => r.timer)],
          restarted,
        ),
      );
      return;
    }
    const steps: { args: string[]; before?: () => void }[] = [
      { args: ['daemon-reload'] },
      ...(created.length > 0 ? [{ args: ['enable', '--now', ...created] }] : []),
      ...(restarted.length > 0 ? [{ args: ['try-restart', ...restarted] }] : []),
      ...(retired.length > 0
        ? [
            { args: ['disable', '--now', ...retired.map((r) => r.timer)] },
            { args: ['daemon-reload'], before: retireFiles },
          ]
        : []),
    ];
    for (const [i, step] of steps.entries()) {
      try {
        step.before?.();
        await this.systemctl(step.args);
      } catch (err) {
        // the files are in place, so the next apply sees nothing to do: say what is left
        const left = steps
          .slice(i)
          .map((a) => `systemctl ${a.args.join(' ')}`)
          .join(' && ');
        (err as Error).message +=
          `; the unit files in ${this.target} are written — finish with: ${left}`;
        throw err;
      }
    }
  }
}

/**
 * Creates the systemd backend. `triggerCommand` and `shimArgs` must be absolute where they
 * name paths (the CLI resolves them), since systemd runs `ExecStart=` outside any shell.
 */
export function createSystemdBackend(options: SystemdBackendOptions): SystemdBackend {
  return new SystemdTimerBackend(options);
}
