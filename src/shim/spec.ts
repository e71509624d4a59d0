/**
 * The job spec file `cronix apply` writes for the shim (SPEC §5.1):
 * `{"app", "schedule_index", "secret_refs", "job"}`, `job` in canonical form,
 * unknown top-level keys ignored.
 *
 * `job` (with `app`) is validated by the manifest contract itself, so a spec
 * accepts exactly what a manifest accepts and is normalized the same way. On
 * every fire the check runs without TypeBox (`acceptManifest`: the schema
 * compiled ahead of time plus the semantic rules; TypeBox's compiler would
 * cost ~100 ms of start-up). Only a broken spec loads the full parser, to
 * report every problem with the manifest's own messages, its paths rebased
 * from `jobs/0/…` to `job/…`. `secret_refs` follows the rules of
 * `auth.secret_refs`, reported at `secret_refs/…`. `report_to` and `report_secret_refs`
 * (SPEC §15) never make a spec invalid: a problem there only turns reporting off.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cut, echo } from '../contract/echo.js';
import { SECRET_REF_PATTERN } from '../contract/manifest/defaults.js';
import { acceptManifest } from '../contract/manifest/quick.js';
import type { Job, ManifestError, Notifier } from '../contract/manifest/types.js';
import { parseSchedule, type Schedule } from '../contract/schedule/index.js';

/** A loaded, checked spec. */
export interface JobSpec {
  app: string;
  scheduleIndex: number;
  secretRefs: string[];
  /** The job, normalized (canonical form). */
  job: Job;
  /** The parsed schedule at `scheduleIndex`. */
  schedule: Schedule;
  /** Every schedule of the job, parsed, in order (several entries share one spec file). */
  schedules: Schedule[];
  /** The notifiers the job's `notify` names (SPEC §12); empty without notifications. */
  notifiers: Record<string, Notifier>;
  /** `report_to` (SPEC §15): where to report, when `cronix apply --report-to` recorded it. */
  reportTo: string | null;
  /** `report_secret_refs`: the refs of the report secret (may be empty). */
  reportSecretRefs: string[];
  /**
   * What is wrong with `report_to` / `report_secret_refs`, if anything: the shim then fires
   * without reporting and says so (reporting never stops a fire).
   */
  reportProblem: string | null;
}

/** A spec problem: the shim exits 3 with this message. */
export class SpecError extends Error {
  override name = 'SpecError';
}

/** Problems listed in one message; the rest are counted. */
const MAX_LISTED = 5;
/** Largest spec file read (one job; the limit of a manifest file). */
const MAX_SPEC_BYTES = 10 * 1024 * 1024;
/** Placeholder job that carries the spec's `secret_refs` through the manifest rules. */
const REFS_PROBE_JOB = { name: 'probe', schedule: '@daily', request: { url: 'http://probe/' } };
const SECRET_REF = new RegExp(SECRET_REF_PATTERN);

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The spec file path of `<app>.<job>` in `dir`. */
export function specPath(dir: string, target: string): string {
  return join(dir, `${target}.json`);
}

function readSpecText(path: string, target: string): string {
  try {
    // a FIFO would block the read forever: only a regular file (or a link to one) is read
    const st = statSync(path);
    if (!st.isFile()) throw new SpecError(`spec file ${echo(path)} is not a regular file`);
    if (st.size > MAX_SPEC_BYTES)
      throw new SpecError(`spec file ${echo(path)} is larger than 10 MiB`);
    return readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof SpecError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new SpecError(
        `no spec file ${echo(path)} for job ${target}: run "cronix apply", or pass --spec-dir / set CRONIX_JOB_SPEC_DIR`,
      );
    }
    throw new SpecError(`cannot read spec file ${echo(path)}: ${code ?? cut(String(err))}`);
  }
}

/** `secret_refs` as `auth.secret_refs` accepts it (absent = none), or null. */
function quickRefs(refs: unknown): string[] | null {
  if (refs === undefined) return [];
  if (!Array.isArray(refs) || refs.length > 8) return null;
  return refs.every((r) => typeof r === 'string' && SECRET_REF.test(r)) ? (refs as string[]) : null;
}

/** The spec's report keys, checked for shape only (the URL is checked when a report is made). */
function reportKeysOf(raw: Record<string, unknown>): {
  reportTo: string | null;
  reportSecretRefs: string[];
  reportProblem: string | null;
} {
  const to = raw['report_to'];
  const refs = raw['report_secret_refs'];
  const reportTo = typeof to === 'string' && to !== '' ? to : null;
  const reportSecretRefs = quickRefs(refs) ?? [];
  let reportProblem: string | null = null;
  if (to !== undefined && to !== null && reportTo === null)
    reportProblem = `report_to: expected a URL string, found ${cut(JSON.stringify(to) ?? '')}`;
  else if (quickRefs(refs) === null)
    reportProblem = `report_secret_refs: expected at most 8 secret refs such as "env:CRONIX_REPORT_SECRET", found ${cut(JSON.stringify(refs) ?? '')}`;
  return { reportTo, reportSecretRefs, reportProblem };
}

/** `schedule_index` problem, if any (absent = 0). */
function indexProblem(index: unknown, job: Job | null): ManifestError | null {
  if (index === undefined) return null;
  if (!Number.isInteger(index) || (index as number) < 0 || (index as number) > 63) {
    const found = typeof index === 'string' ? echo(index) : cut(JSON.stringify(index) ?? 'nothing');
    return { path: 'schedule_index', message: `expected an integer 0..63, found ${found}` };
  }
  if (job !== null && (index as number) >= job.schedules.length) {
    return {
      path: 'schedule_index',
      message: `expected an index into job/schedules (${job.schedules.length} entries), found ${index as number}`,
    };
  }
  return null;
}

/** Cold path: the full manifest parser names every problem (loads TypeBox). */
async function explain(raw: Record<string, unknown>, jobOk: boolean, refsOk: boolean) {
  const { parseManifest } = await import('../contract/manifest/parse.js');
  const problems: ManifestError[] = [];
  if (!jobOk) {
    const r = parseManifest({
      version: 1,
      app: raw['app'],
      jobs: [raw['job']],
      ...(raw['notifiers'] !== undefined ? { notifiers: raw['notifiers'] } : {}),
    });
    if (!r.ok) {
      for (const e of r.errors) {
        if (e.path === 'jobs/0' && raw['job'] === undefined) {
          problems.push({ path: 'job', message: 'required field is missing (expected an object)' });
        } else
          problems.push({ path: e.path.replace(/^jobs\/0(?=\/|$)/, 'job'), message: e.message });
        // (`notifiers/…` paths are the spec file's own key: they stay as they are)
      }
    }
  }
  if (!refsOk) {
    const probe = { ...REFS_PROBE_JOB, auth: { secret_refs: raw['secret_refs'] } };
    const r = parseManifest({ version: 1, app: 'probe', jobs: [probe] });
    if (!r.ok) {
      for (const e of r.errors) {
        problems.push({ path: e.path.replace(/^jobs\/0\/auth\//, ''), message: e.message });
      }
    }
  }
  return problems;
}

function describeProblems(path: string, problems: readonly ManifestError[]): string {
  const listed = problems
    .slice(0, MAX_LISTED)
    .map((p) => `${cut(p.path) || '(root)'}: ${p.message}`);
  const more = problems.length > MAX_LISTED ? `; and ${problems.length - MAX_LISTED} more` : '';
  return `spec file ${echo(path)} is invalid: ${listed.join('; ')}${more}`;
}

/**
 * Loads and checks `<dir>/<app>.<job>.json`.
 * @throws {SpecError} with a one-line message for a missing, unreadable,
 *   corrupt or invalid spec, naming each problem's path (`job/policy/…`).
 */
export async function loadSpec(dir: string, target: string): Promise<JobSpec> {
  const path = specPath(dir, target);
  const text = readSpecText(path, target);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SpecError(
      `spec file ${echo(path)} is not valid JSON: ${cut((err as Error).message)}`,
    );
  }
  if (!isObject(raw)) throw new SpecError(`spec file ${echo(path)} must hold a JSON object`);
  const manifest = isObject(raw['job'])
    ? acceptManifest({
        version: 1,
        app: raw['app'],
        jobs: [raw['job']],
        ...(raw['notifiers'] !== undefined ? { notifiers: raw['notifiers'] } : {}),
      })
    : null;
  const job = manifest?.jobs[0] ?? null;
  const refs = quickRefs(raw['secret_refs']);
  const index = indexProblem(raw['schedule_index'], job);
  if (manifest === null || job === null || refs === null || index !== null) {
    const problems = await explain(raw, job !== null, refs !== null);
    if (index !== null) problems.push(index);
    if (problems.length === 0) problems.push({ path: 'job', message: 'is not a valid job' });
    throw new SpecError(describeProblems(path, problems));
  }
  if (`${manifest.app}.${job.name}` !== target) {
    throw new SpecError(
      `spec file ${echo(path)} describes ${manifest.app}.${job.name}, not ${target}`,
    );
  }
  const scheduleIndex = (raw['schedule_index'] as number | undefined) ?? 0;
  const schedules: Schedule[] = [];
  for (const [k, source] of job.schedules.entries()) {
    const parsed = parseSchedule(source); // already valid: the manifest rules parsed it
    if (!parsed.ok)
      throw new SpecError(`spec file ${echo(path)}: job/schedules/${k}: ${parsed.error}`);
    schedules.push(parsed.schedule);
  }
  return {
    app: manifest.app,
    scheduleIndex,
    secretRefs: refs.length > 0 ? refs : job.auth.secret_refs,
    job,
    schedule: schedules[scheduleIndex] as Schedule,
    schedules,
    notifiers: manifest.notifiers ?? {},
    ...reportKeysOf(raw),
  };
}
