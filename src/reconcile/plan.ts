/**
 * The plan (SPEC §6): desired entries against the owned entries a backend reports, as
 * creates / updates (hash differs, or the installed entry was modified) / deletes (owned by the
 * same app, no longer desired) / unchanged, plus the refusals of the backend: a refused entry is
 * in none of the other lists, and carries every reason it is refused. Pure: no I/O.
 */
import type { Backend, BackendName, ChangeSet, DesiredEntry, OwnedEntry } from './backend.js';

/** An entry whose installed version differs from the desired one. */
export interface PlanUpdate {
  /** What will be installed. */
  entry: DesiredEntry;
  /** What is installed now. */
  previous: OwnedEntry;
  /** Why it changes: `hash` (the job or schedule changed) or the backend's `modified` reason. */
  reason: string;
}

/** A desired entry the backend cannot express faithfully. */
export interface Refusal {
  id: string;
  /** The schedule at the entry's index, as written. */
  schedule: string;
  /** Every reason, one sentence each (at least one). */
  reasons: string[];
}

/** The result of {@link plan}. Lists are sorted by app, job, schedule index. */
export interface Plan {
  /** The manifest's app: only its entries are deleted. */
  app: string;
  backend: BackendName;
  creates: DesiredEntry[];
  updates: PlanUpdate[];
  deletes: OwnedEntry[];
  unchanged: DesiredEntry[];
  /**
   * Desired entries the backend cannot express (in none of the lists above). Non-empty: the
   * plan must not be applied (nothing is written).
   */
  refusals: Refusal[];
}

/** Options of {@link plan}. */
export interface PlanOptions {
  /** The app whose owned entries may be deleted; default the app of the desired entries. */
  app?: string;
}

type Keyed = { app: string; job: string; scheduleIndex: number };

/** Orders entries by app, job, then schedule index. */
export function compareEntries(a: Keyed, b: Keyed): number {
  if (a.app !== b.app) return a.app < b.app ? -1 : 1;
  if (a.job !== b.job) return a.job < b.job ? -1 : 1;
  return a.scheduleIndex - b.scheduleIndex;
}

/**
 * Compares `desired` with `owned` and asks `backend.refuse` about every desired entry (an entry
 * without secret refs is refused by the core: the shim could not sign).
 * Owned entries of other apps are ignored; owned entries sharing an id count once (the
 * duplicate makes the entry `modified`, so it is rewritten as one).
 * @throws RangeError when the desired entries belong to several apps, or no app is known.
 */
export function plan(
  desired: readonly DesiredEntry[],
  owned: readonly OwnedEntry[],
  backend: Pick<Backend, 'name' | 'refuse'>,
  options: PlanOptions = {},
): Plan {
  const apps = new Set(desired.map((d) => d.app));
  if (options.app !== undefined) apps.add(options.app);
  if (apps.size !== 1) {
    throw new RangeError(
      `plan needs exactly one app, found ${apps.size === 0 ? 'none' : [...apps].join(', ')}`,
    );
  }
  const app = [...apps][0] as string;

  const installed = new Map<string, OwnedEntry>();
  for (const entry of [...owned].sort(compareEntries)) {
    if (entry.app !== app) continue;
    const seen = installed.get(entry.id);
    if (seen === undefined) installed.set(entry.id, entry);
    else if (seen.modified === undefined)
      installed.set(entry.id, { ...seen, modified: 'duplicate entry' });
  }

  const result: Plan = {
    app,
    backend: backend.name,
    creates: [],
    updates: [],
    deletes: [],
    unchanged: [],
    refusals: [],
  };
  const wanted = new Set<string>();
  for (const entry of [...desired].sort(compareEntries)) {
    wanted.add(entry.id);
    // a command job signs nothing (SPEC §11): it needs no refs
    const reasons = [
      ...(entry.secretRefs.length === 0 && entry.spec.command === undefined
        ? [
            `job ${entry.job} has no auth.secret_refs and no --secret-ref was given, so the shim could not sign its requests; add auth.secret_refs to the job or pass --secret-ref`,
          ]
        : []),
      ...backend.refuse(entry),
    ];
    if (reasons.length > 0) {
      result.refusals.push({ id: entry.id, schedule: entry.schedule, reasons });
      continue;
    }
    const previous = installed.get(entry.id);
    if (previous === undefined) result.creates.push(entry);
    else if (previous.hash !== entry.hash) result.updates.push({ entry, previous, reason: 'hash' });
    else if (previous.modified !== undefined)
      result.updates.push({ entry, previous, reason: previous.modified });
    else result.unchanged.push(entry);
  }
  for (const entry of installed.values()) if (!wanted.has(entry.id)) result.deletes.push(entry);
  return result;
}

/** The change set `apply` executes (deletes, then updates, then creates). */
export function changeSetOf(p: Plan): ChangeSet {
  return { deletes: p.deletes, updates: p.updates.map((u) => u.entry), creates: p.creates };
}

/** Whether the plan changes any entry. */
export function planChangesEntries(p: Plan): boolean {
  return p.creates.length + p.updates.length + p.deletes.length > 0;
}

/** One entry in the JSON output. */
export interface EntryJson {
  id: string;
  app: string;
  job: string;
  schedule_index: number;
  /** Absent for deletes (the schedule is no longer in the manifest). */
  schedule?: string;
  hash: string;
}

/** The stable JSON shape of a plan (documented in docs/reconcile.md). */
export interface PlanJson {
  app: string;
  backend: BackendName;
  creates: EntryJson[];
  updates: (EntryJson & { previous_hash: string; reason: string })[];
  deletes: EntryJson[];
  unchanged: EntryJson[];
  /** `reason` is every reason joined with "; " (kept for older readers); `reasons` lists them. */
  refusals: { id: string; schedule: string; reason: string; reasons: string[] }[];
  summary: { create: number; update: number; delete: number; unchanged: number; refused: number };
}

/** An owned or desired entry in the JSON output. */
export function entryJson(e: DesiredEntry | OwnedEntry): EntryJson {
  const out: EntryJson = {
    id: e.id,
    app: e.app,
    job: e.job,
    schedule_index: e.scheduleIndex,
    hash: e.hash,
  };
  if ('schedule' in e) out.schedule = e.schedule;
  return out;
}

/** The plan as its stable JSON value. */
export function planToJson(p: Plan): PlanJson {
  return {
    app: p.app,
    backend: p.backend,
    creates: p.creates.map(entryJson),
    updates: p.updates.map((u) => ({
      ...entryJson(u.entry),
      previous_hash: u.previous.hash,
      reason: u.reason,
    })),
    deletes: p.deletes.map(entryJson),
    unchanged: p.unchanged.map(entryJson),
    refusals: p.refusals.map((r) => ({
      id: r.id,
      schedule: r.schedule,
      reason: r.reasons.join('; '),
      reasons: r.reasons,
    })),
    summary: {
      create: p.creates.length,
      update: p.updates.length,
      delete: p.deletes.length,
      unchanged: p.unchanged.length,
      refused: p.refusals.length,
    },
  };
}

function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/**
 * The plan as human-readable lines: one row per entry in apply order (deletes, updates,
 * creates, then unchanged), the refused entries apart with every reason, and a summary line.
 */
export function renderPlanTable(p: Plan): string[] {
  const rows: string[][] = [['ACTION', 'ENTRY', 'SCHEDULE', 'HASH']];
  for (const d of p.deletes) rows.push(['delete', d.id, '', d.hash]);
  for (const u of p.updates) {
    const why = u.reason === 'hash' ? '' : ` (${u.reason})`;
    const hash =
      u.previous.hash === u.entry.hash ? u.entry.hash : `${u.previous.hash} -> ${u.entry.hash}`;
    rows.push(['update', u.entry.id, u.entry.schedule, `${hash}${why}`]);
  }
  for (const c of p.creates) rows.push(['create', c.id, c.schedule, c.hash]);
  for (const u of p.unchanged) rows.push(['unchanged', u.id, u.schedule, u.hash]);
  const lines =
    rows.length > 1
      ? table(rows)
      : p.refusals.length > 0
        ? []
        : [`no ${p.backend} entries for app ${p.app}`];
  if (p.refusals.length > 0) {
    if (lines.length > 0) lines.push('');
    lines.push('refused (nothing will be written):');
    for (const r of p.refusals) {
      lines.push(`  ${r.id} (${r.schedule}):`);
      for (const reason of r.reasons) lines.push(`    - ${reason}`);
    }
  }
  lines.push(
    '',
    `Plan: ${p.creates.length} to create, ${p.updates.length} to update, ${p.deletes.length} to delete, ${p.unchanged.length} unchanged${p.refusals.length > 0 ? `; ${p.refusals.length} refused` : ''}.`,
  );
  return lines;
}
