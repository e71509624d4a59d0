/**
 * The systemd backend (SPEC §6): per (app, job, schedule index) a `cronix-<app>-<job>-<index>`
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

  private execStartOf(app: string, job: string): string {
    return execLine([
      ...this.options.triggerCommand,
      'trigger',
      `${app}.${job}`,
      ...this.options.shimArgs,
    ]);
  }

  /** Both files of an entry, or why systemd cannot express it. */
  private render(entry: DesiredEntry): { service: string; timer: string } | { reason: string } {
    const parsed = parseSchedule(entry.schedule);
    if (!parsed.ok) return { reason: `invalid schedule: ${parsed.error}` };
    const zone = entry.spec.timezone;
    const now = this.now();
    const calendar = toOnCalendar(parsed.schedule, zone, { now });
    if (!calendar.ok) return { reason: calendar.reason };
    if (
      calendar.lines.some((l) => l.endsWith(` ${zone}`)) &&
      zone !== 'UTC' &&
      !existsSync(join(this.zoneInfoDir, zone))
    ) {
      return {
        reason:
          `time zone ${zone} is missing from this host's tz database (${join(this.zoneInfoDir, zone)}), ` +
          'so systemd would reject the timer; install or update tzdata',
      };
    }
    const policy = timerPolicy(entry.spec, parsed.schedule, now);
    if (!policy.ok) return { reason: policy.reason };
    const blocked = foreignInTheWay(this.target, entry);
    if (blocked !== null) return { reason: blocked };
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

  refuse(entry: DesiredEntry): string | null {
    const r = this.render(entry);
    return 'reason' in r ? r.reason : null;
  }

  async list(app?: string): Promise<OwnedEntry[]> {
    const out: OwnedEntry[] = [];
    for (const [id, { service, timer }] of scanUnitDir(this.target)) {
      const marker = (timer ?? service)?.marker;
      if (!marker || (app !== undefined && marker.app !== app)) continue;
      const entry: OwnedEntry = {
        id,
        app: marker.app,
        job: marker.job,
        scheduleIndex: marker.scheduleIndex,
        hash: marker.hash,
      };
      const modified = this.modifiedReason(service, timer, marker.app, marker.job);
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
    const { deletes, updates, creates } = changes;
    if (deletes.length + updates.length + creates.length === 0) return;

    // render everything first: a refusal here means nothing is written
    const writes = new Map<string, string>();
    for (const entry of [...updates, ...creates]) {
      const r = this.render(entry);
      if ('reason' in r) throw new BackendWriteError(`${entry.id}: ${r.reason}`);
      const names = unitFileNames(entry.id);
      writes.set(names.service, r.service);
      writes.set(names.timer, r.timer);
    }
    prepareUnitDir(this.target);

    // which files differ, and which of ours go
    const changed = [...writes].filter(([name, text]) => readUnit(this.target, name) !== text);
    const ours = scanUnitDir(this.target);
    const removals: string[] = [];
    const stopTimers: string[] = [];
    for (const d of deletes) {
      const slot = ours.get(d.id);
      const owner = (slot?.timer ?? slot?.service)?.marker;
      if (!owner || owner.app !== d.app || owner.job !== d.job) continue; // another app's now
      const names = unitFileNames(d.id);
      if (slot?.timer) {
        removals.push(names.timer);
        stopTimers.push(names.timer);
      }
      if (slot?.service) removals.push(names.service);
    }
    if (changed.length === 0 && removals.length === 0) return;

    const running = this.running();
    if (running && stopTimers.length > 0) await this.systemctl(['disable', '--now', ...stopTimers]);
    for (const name of removals) removeUnit(this.target, name);
    for (const [name, text] of changed) writeUnit(this.target, name, text);

    const created = creates.map((c) => unitFileNames(c.id).timer);
    const changedNames = new Set(changed.map(([name]) => name));
    const restarted = updates
      .map((u) => unitFileNames(u.id).timer)
      .filter((name) => changedNames.has(name));
    if (!running) {
      this.notices.push(noSystemdNotice(this.target, created, stopTimers, restarted));
      return;
    }
    const steps = [
      ['daemon-reload'],
      ...(created.length > 0 ? [['enable', '--now', ...created]] : []),
      ...(restarted.length > 0 ? [['try-restart', ...restarted]] : []),
    ];
    for (const [i, step] of steps.entries()) {
      try {
        await this.systemctl(step);
      } catch (err) {
        // the files are in place, so the next apply sees nothing to do: say what is left
        const left = steps
          .slice(i)
          .map((a) => `systemctl ${a.join(' ')}`)
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
