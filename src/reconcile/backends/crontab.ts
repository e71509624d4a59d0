/**
 * The crontab backend (SPEC §6): entries in the invoking user's crontab (through crontab(1)) or
 * in a system file (`/etc/crontab`, `/etc/cron.d/<name>`: lines carry a user field). Each owned
 * entry is a marker comment plus its cron line(s) (see `crontab-format.ts`); everything else is
 * kept byte for byte, the file is replaced in one atomic step, and an apply that changes nothing
 * does not touch it at all. See docs/backends/crontab.md.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { effectivePolicy } from '../../contract/manifest/index.js';
import { checkTimeZone } from '../../contract/schedule/index.js';
import {
  BackendConfigError,
  entryId,
  type AdoptReport,
  type Backend,
  type ChangeSet,
  type DesiredEntry,
  type OwnedEntry,
} from '../backend.js';
import type { BackendOptions } from './options.js';
import { refuseSecondsEntry } from './seconds.js';
import {
  ownedEntries,
  parseCrontab,
  parsePublicBlocks,
  renderMarker,
  shellWord,
} from './crontab-format.js';
import { CRON_MINUTES, translateSchedule, type CronTranslation } from './crontab-schedule.js';
import {
  fileTarget,
  userTarget,
  validateCrontabPath,
  type CrontabCommand,
  type CrontabTarget,
} from './crontab-target.js';

/** Test seams of {@link createCrontabBackend}. */
export interface CrontabSeams {
  /** Reference instant for zone offsets (default `Date.now`). */
  now?: () => number;
  /** How to run crontab(1) for the user crontab (default `crontab`). */
  crontabCommand?: CrontabCommand;
  /** Files read to detect the cron daemon's zone (default the real ones). */
  zoneFiles?: { localtime: string; timezone: string };
}

/**
 * The cron daemon's time zone: the target of the `/etc/localtime` link (what glibc and so the
 * daemon use), else `/etc/timezone` (Debian), else `$TZ`, else UTC.
 */
export function detectHostZone(
  env: NodeJS.ProcessEnv,
  files = { localtime: '/etc/localtime', timezone: '/etc/timezone' },
): string {
  try {
    const link = readlinkSync(files.localtime);
    const at = link.indexOf('zoneinfo/');
    if (at >= 0) return link.slice(at + 'zoneinfo/'.length);
  } catch {
    // not a link
  }
  try {
    const name = readFileSync(files.timezone, 'utf8').split('\n')[0]?.trim();
    if (name) return name;
  } catch {
    // no file
  }
  const tz = env['TZ']?.replace(/^:/, '').trim();
  return tz ? tz : 'UTC';
}

/** Host mode cannot honour `policy.rate` (SPEC §16): every backend refuses it with this. */
export const RATE_NEEDS_SERVE =
  'policy.rate needs cronix serve: the trigger shim keeps no rate budget shared between fires; remove policy.rate or run the job under cronix serve';

/**
 * Host mode cannot honour `policy.blackout` (SPEC §16 "Calendars"): the host scheduler starts
 * every fire of the schedule, and the trigger shim holds no calendar — no holiday file on a
 * Kubernetes or EventBridge target, no skips of `cronix skip` — so every backend refuses it.
 */
export const BLACKOUT_NEEDS_SERVE =
  'policy.blackout needs cronix serve: the host scheduler starts every fire and the trigger shim keeps no calendar (no blackout windows, no holiday files, no cronix skip); remove policy.blackout or run the job under cronix serve';

const CRON_USER = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;

/** Refusals for policies the shim under cron cannot honour (§8 extensions): every one, or none. */
export function refuseCronPolicy(entry: DesiredEntry): string[] {
  const { policy } = entry.spec;
  const eff = effectivePolicy(entry.spec);
  const reasons: string[] = [];
  if (policy.concurrency === 'Enqueue') {
    reasons.push(
      'policy.concurrency "Enqueue" needs cronix serve: the trigger shim cannot queue fires (use Forbid, Replace or Allow here)',
    );
  }
  if (policy.max_concurrent !== undefined && policy.max_concurrent > 1) {
    reasons.push(
      `policy.max_concurrent ${policy.max_concurrent} needs cronix serve: under cron the shim runs one fire at a time (${policy.concurrency}); remove max_concurrent or use Allow`,
    );
  }
  if (
    policy.catchup !== undefined &&
    eff.catchup.mode !== 'none' &&
    eff.catchup.window_seconds !== 0
  ) {
    reasons.push(
      `policy.catchup (mode "${eff.catchup.mode}") needs cronix serve: cron never runs fires missed while it or the host was down; remove policy.catchup or set mode "none"`,
    );
  }
  if (eff.jitter.stable_seconds > 0 || eff.jitter.random_seconds > 0) {
    reasons.push(
      'policy.jitter needs cronix serve or --backend systemd: cron starts jobs on the minute; remove policy.jitter',
    );
  }
  if (policy.rate !== undefined) reasons.push(RATE_NEEDS_SERVE);
  if (policy.blackout !== undefined) reasons.push(BLACKOUT_NEEDS_SERVE);
  return reasons;
}

/** The variable an `env:` ref (or a bare ref, which means `env:`) reads; null for other schemes. */
function envVariable(ref: string): string | null {
  if (ref.startsWith('env:')) return ref.slice(4);
  return /^(file|raw):/.test(ref) ? null : ref;
}

/**
 * Warnings for `env:` secret refs (SPEC §4) under cron: cron starts each command with a nearly
 * empty environment (HOME, LOGNAME, PATH=/usr/bin:/bin, SHELL, plus the crontab's own `NAME=value`
 * lines), never the environment of the shell that ran `cronix apply`, so such a ref resolves to
 * nothing and every fire exits 3. A variable set by a line of the crontab itself is fine.
 */
export function cronEnvWarnings(
  entries: readonly DesiredEntry[],
  crontabText: string,
  system: boolean,
): string[] {
  const setInCrontab = new Set(
    crontabText
      .split('\n')
      .map((l) => /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=/.exec(l)?.[1])
      .filter((n): n is string => n !== undefined),
  );
  const out: string[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    const fireRefs = [
      ...e.secretRefs,
      ...Object.values(e.spec.command?.env_from_secrets ?? {}),
      ...Object.values(e.spec.request?.headers_from_secrets ?? {}),
    ];
    const reportRefs = e.report?.secretRefs ?? [];
    for (const ref of [...fireRefs, ...reportRefs]) {
      const name = envVariable(ref);
      const key = `${e.app}.${e.job}:${ref}`;
      if (name === null || setInCrontab.has(name) || seen.has(key)) continue;
      seen.add(key);
      const effect = fireRefs.includes(ref)
        ? 'every fire exits 3'
        : 'no report can be signed (the fires run, their reports wait in the spool)';
      out.push(
        `job ${e.app}/${e.job}: secret ref ${ref} reads $${name}, but cron starts commands with an almost empty environment, so it will be unset and ${effect}; ` +
          `use a file: ref (file:/etc/cronix/secrets/${name.toLowerCase()}, mode 0600, owned by the user the entry runs as)` +
          (system
            ? ' — do not put the value in this system crontab: it is world-readable'
            : `, or add a ${name}=… line to the top of the user crontab (crontab -e; the spool file is mode 0600)`) +
          ' (docs/backends/crontab.md#secrets)',
      );
    }
  }
  return out;
}

/**
 * Creates the crontab backend from the command-line options.
 * @throws {BackendConfigError} for an unusable `--crontab-path`, `--cron-user`,
 *   `--cron-timezone` or a trigger command cron cannot run.
 */
export function createCrontabBackend(options: BackendOptions, seams: CrontabSeams = {}): Backend {
  const now = seams.now ?? Date.now;
  const target: CrontabTarget =
    options.crontabPath !== undefined
      ? fileTarget(validateCrontabPath(options.crontabPath))
      : userTarget(seams.crontabCommand);
  const user = options.cronUser;
  if (target.system && !CRON_USER.test(user)) {
    throw new BackendConfigError(
      `--cron-user ${JSON.stringify(user)} is not a user name (expected letters, digits, "_", "-", "." such as root or www-data)`,
    );
  }
  const hostZone = options.cronTimezone ?? detectHostZone(options.env, seams.zoneFiles);
  const zoneError = checkTimeZone(hostZone);
  if (zoneError !== null) {
    throw new BackendConfigError(
      `the cron daemon's time zone ${JSON.stringify(hostZone)} ${options.cronTimezone !== undefined ? '(--cron-timezone)' : '(from /etc/localtime, /etc/timezone or TZ)'} is not usable: ${zoneError}; pass --cron-timezone with an IANA zone`,
    );
  }
  for (const arg of [...options.triggerCommand, ...options.shimArgs]) {
    if (/[%\n\r]/.test(arg)) {
      throw new BackendConfigError(
        `${JSON.stringify(arg)} (from --trigger-bin, --spec-dir, --lock-dir, --state-dir, --lock-backend or --report-to) contains "%" or a line break, which cron turns into input or a new line; use a path without them`,
      );
    }
  }

  const command = (app: string, job: string): string =>
    [...options.triggerCommand, 'trigger', `${app}.${job}`, ...options.shimArgs]
      .map(shellWord)
      .join(' ');
  const expected = (app: string, job: string): string =>
    target.system ? `${user} ${command(app, job)}` : command(app, job);

  const translations = new Map<string, CronTranslation>();
  const translate = (entry: DesiredEntry): CronTranslation => {
    const key = `${entry.spec.timezone}\n${entry.schedule}`;
    let t = translations.get(key);
    if (t === undefined) {
      t = translateSchedule(entry.schedule, entry.spec.timezone, hostZone, now());
      translations.set(key, t);
    }
    return t;
  };

  const block = (entry: DesiredEntry): string => {
    const t = translate(entry);
    if (!t.ok) throw new BackendConfigError(`${entry.id}: ${t.reason}`);
    const lines = t.fields.map((f) => `${f} ${expected(entry.app, entry.job)}`);
    const marker = renderMarker(
      {
        app: entry.app,
        job: entry.job,
        index: entry.scheduleIndex,
        hash: entry.hash,
        lines: lines.length,
      },
      lines,
    );
    return `${[marker, ...lines].join('\n')}\n`;
  };

  const key = (e: { app: string; job: string; scheduleIndex: number }): string =>
    `${e.app}/${e.job}/${e.scheduleIndex}`;

  return {
    name: 'crontab',
    target: target.description,
    triggerLine: command('APP', 'JOB').replace('APP.JOB', '<app>.<job>'),
    refuse(entry: DesiredEntry): string[] {
      // a seconds schedule has no cron translation: its own reason says all about the schedule
      const seconds = refuseSecondsEntry(entry, CRON_MINUTES);
      const t = seconds === null ? translate(entry) : null;
      return [
        ...(seconds !== null ? [seconds] : []),
        ...(t !== null && !t.ok ? [t.reason] : []),
        ...refuseCronPolicy(entry),
      ];
    },
    warnings(entries: readonly DesiredEntry[]): string[] {
      return cronEnvWarnings(entries, target.read(), target.system);
    },
    async list(app?: string): Promise<OwnedEntry[]> {
      return ownedEntries(parseCrontab(target.read()), expected, app);
    },
    async apply(changes: ChangeSet): Promise<void> {
      const upserts = new Map<string, DesiredEntry>();
      for (const e of [...changes.updates, ...changes.creates]) upserts.set(key(e), e);
      const deletes = new Set(changes.deletes.map(key));
      if (upserts.size === 0 && deletes.size === 0) return;
      const before = target.read();
      const placed = new Set<string>();
      let text = '';
      for (const item of parseCrontab(before)) {
        if (item.kind === 'foreign') {
          text += item.text;
          continue;
        }
        const k = `${item.marker.app}/${item.marker.job}/${item.marker.index}`;
        const entry = upserts.get(k);
        if (entry !== undefined) {
          if (!placed.has(k)) text += block(entry);
          placed.add(k);
        } else if (!deletes.has(k)) {
          text += item.text;
        }
      }
      const added = [...upserts.entries()].filter(([k]) => !placed.has(k));
      if (added.length > 0 && text !== '' && !text.endsWith('\n')) text += '\n';
      for (const [, entry] of added) text += block(entry);
      if (text !== before) target.write(text);
    },
    async adopt(
      desired: readonly DesiredEntry[],
      app: string,
      dryRun: boolean,
    ): Promise<AdoptReport> {
      // one read, one atomic replace: each public block becomes ours in place, so cron never
      // sees both or neither
      const wanted = new Map(desired.map((d) => [`${d.job}/${d.scheduleIndex}`, d]));
      const report: AdoptReport = { adopted: [], removed: [] };
      const before = target.read();
      let text = '';
      for (const piece of parsePublicBlocks(before)) {
        if (typeof piece === 'string' || piece.app !== app) {
          text += typeof piece === 'string' ? piece : piece.text;
          continue;
        }
        const d = wanted.get(`${piece.job}/${piece.index}`);
        if (d !== undefined) {
          text += block(d);
          report.adopted.push(d.id);
        } else report.removed.push(entryId(piece.app, piece.job, piece.index));
      }
      if (!dryRun && text !== before) target.write(text);
      return report;
    },
  };
}
