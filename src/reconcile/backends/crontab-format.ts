/**
 * The text of a crontab as cronix reads and writes it. Pure.
 *
 * An owned entry is a block: one marker comment line, then its cron line(s):
 *
 * ```
 * # cronix:v1 app=billing job=settle index=0 hash=0123456789abcdef sum=1a2b3c4d
 * *\/10 * * * * root /usr/bin/node /opt/cronix/cronix.mjs trigger billing.settle --spec-dir /etc/cronix/jobs
 * ```
 *
 * `sum` is a checksum of the cron line(s) as written, so a hand edit is noticed; `lines=N` is
 * present when one schedule needs several cron lines (`@every 90m`). Every other line — foreign
 * entries, comments, blank lines, environment settings, markers we cannot parse — is kept
 * byte for byte, line terminators included.
 */
import { createHash } from 'node:crypto';
import { entryId, type OwnedEntry } from '../backend.js';

/** Prefix of every marker line. */
export const MARKER_PREFIX = '# cronix:v1 ';

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const HASH = /^[0-9a-f]{16}$/;
const SUM = /^[0-9a-f]{8}$/;

/** The identity a marker carries. */
export interface Marker {
  app: string;
  job: string;
  index: number;
  hash: string;
  /** Checksum of the entry's cron lines. */
  sum: string;
  /** How many cron lines follow (1 unless the marker says `lines=N`). */
  lines: number;
}

/** A piece of a crontab: a foreign line, or one of our blocks. */
export type CrontabItem =
  | { kind: 'foreign'; text: string }
  | {
      kind: 'owned';
      marker: Marker;
      id: string;
      text: string;
      cronLines: string[];
      intact: boolean;
    };

/** Checksum of cron lines as written: first 8 hex of sha256 of the lines joined by `\n`. */
export function linesSum(lines: readonly string[]): string {
  return createHash('sha256').update(lines.join('\n'), 'utf8').digest('hex').slice(0, 8);
}

/** The marker line (without terminator). */
export function renderMarker(m: Omit<Marker, 'sum'>, cronLines: readonly string[]): string {
  const extra = cronLines.length > 1 ? ` lines=${cronLines.length}` : '';
  return `${MARKER_PREFIX}app=${m.app} job=${m.job} index=${m.index} hash=${m.hash} sum=${linesSum(cronLines)}${extra}`;
}

/** Parses a marker line (terminator stripped); null when it is not a valid marker. */
export function parseMarker(line: string): Marker | null {
  if (!line.startsWith(MARKER_PREFIX)) return null;
  const fields = new Map<string, string>();
  for (const part of line.slice(MARKER_PREFIX.length).trim().split(/\s+/)) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const app = fields.get('app') ?? '';
  const job = fields.get('job') ?? '';
  const index = fields.get('index') ?? '';
  const hash = fields.get('hash') ?? '';
  const sum = fields.get('sum') ?? '';
  const lines = fields.get('lines') ?? '1';
  if (!NAME.test(app) || !NAME.test(job) || !/^\d{1,2}$/.test(index)) return null;
  if (!HASH.test(hash) || !SUM.test(sum) || !/^[1-9]\d{0,2}$/.test(lines)) return null;
  return { app, job, index: Number(index), hash, sum, lines: Number(lines) };
}

const stripEol = (text: string): string => text.replace(/\r?\n$/, '');

/** Whether `line` is a cron line running the trigger of `app.job` (so it may be ours). */
function isTriggerLine(line: string, app: string, job: string): boolean {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return false;
  return new RegExp(`(^|\\s)trigger\\s+${app}\\.${job}(\\s|$)`).test(trimmed);
}

/**
 * Splits crontab text into items. A marker owns the following `lines` lines only if each is a
 * cron line running `trigger <app>.<job>`; a marker whose line is gone keeps only itself (and
 * is reported `intact: false`), so a foreign line after it is never taken for ours.
 */
export function parseCrontab(text: string): CrontabItem[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const items: CrontabItem[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const marker = parseMarker(stripEol(line));
    if (marker === null) {
      items.push({ kind: 'foreign', text: line });
      continue;
    }
    const following = lines.slice(i + 1, i + 1 + marker.lines);
    const complete =
      following.length === marker.lines &&
      following.every((l) => isTriggerLine(stripEol(l), marker.app, marker.job));
    const cronLines = complete ? following.map(stripEol) : [];
    items.push({
      kind: 'owned',
      marker,
      id: entryId(marker.app, marker.job, marker.index),
      text: complete ? [line, ...following].join('') : line,
      cronLines,
      intact: complete && linesSum(cronLines) === marker.sum,
    });
    if (complete) i += marker.lines;
  }
  return items;
}

/** The suffix of a cron line after its 5 time fields (user field and command). */
export function commandPart(cronLine: string): string {
  const m = /^\s*(?:\S+\s+){5}(.*)$/.exec(cronLine);
  return m?.[1] ?? '';
}

/**
 * The owned entries of parsed items, in file order (duplicates included). An entry is
 * `modified` when its lines are missing or hand-edited, or when its command differs from
 * `expectedCommand(app, job)` (another `--trigger-bin`, `--spec-dir` or `--cron-user`).
 */
export function ownedEntries(
  items: readonly CrontabItem[],
  expectedCommand: (app: string, job: string) => string,
  app?: string,
): OwnedEntry[] {
  const out: OwnedEntry[] = [];
  for (const item of items) {
    if (item.kind !== 'owned' || (app !== undefined && item.marker.app !== app)) continue;
    const { marker } = item;
    const entry: OwnedEntry = {
      id: item.id,
      app: marker.app,
      job: marker.job,
      scheduleIndex: marker.index,
      hash: marker.hash,
    };
    if (item.cronLines.length === 0) entry.modified = 'cron line missing';
    else if (!item.intact) entry.modified = 'cron line edited by hand';
    else if (item.cronLines.some((l) => commandPart(l) !== expectedCommand(marker.app, marker.job)))
      entry.modified = 'command or user differs from the current flags';
    out.push(entry);
  }
  return out;
}

/** A POSIX-shell word for `arg`: bare when safe, else single-quoted. */
export function shellWord(arg: string): string {
  if (/^[A-Za-z0-9_@+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** The public cronix reconciler's marker, on the line after its cron line (SPEC §14). */
const PUBLIC_MARKER =
  /^# cronix:owned app=([a-z][a-z0-9-]{0,62}) job=([a-z][a-z0-9-]{0,62}) hash=([0-9a-f]{1,64}) idx=(\d{1,4})$/;

/** One entry of the public reconciler: its cron line and marker line, as found. */
export interface PublicBlock {
  app: string;
  job: string;
  index: number;
  /** Both lines with their terminators. */
  text: string;
}

/**
 * Splits crontab text into foreign text and blocks installed by the public cronix reconciler:
 * a cron line (not a comment, not blank) directly followed by
 * `# cronix:owned app=<app> job=<job> hash=<hash> idx=<n>`. Everything else stays as text,
 * byte for byte.
 */
export function parsePublicBlocks(text: string): (string | PublicBlock)[] {
  const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: (string | PublicBlock)[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const next = lines[i + 1];
    const m = next === undefined ? null : PUBLIC_MARKER.exec(stripEol(next));
    const cron = stripEol(line).trim();
    if (m && cron !== '' && !cron.startsWith('#')) {
      out.push({
        app: m[1] as string,
        job: m[2] as string,
        index: Number(m[4]),
        text: line + next,
      });
      i++;
    } else out.push(line);
  }
  return out;
}
