/**
 * The job spec file `cronix apply` writes for the shim (SPEC §5.1):
 * `{"app", "schedule_index", "secret_refs", "job"}` with `job` in canonical
 * form. Read on every fire, so it is checked by a light structural guard
 * instead of the full manifest parser (whose TypeBox schema costs ~100 ms to
 * load); only when the guard fails is the full parser loaded, for precise
 * error paths.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Job } from '../contract/manifest/types.js';
import { checkTimeZone, parseSchedule, type Schedule } from '../contract/schedule/index.js';

/** A loaded, checked spec. */
export interface JobSpec {
  app: string;
  scheduleIndex: number;
  secretRefs: string[];
  job: Job;
  /** The parsed schedule at `scheduleIndex`. */
  schedule: Schedule;
  /** Every schedule of the job, parsed, in order (several entries share one spec file). */
  schedules: Schedule[];
}

/** A spec problem: the shim exits 3 with this message. */
export class SpecError extends Error {
  override name = 'SpecError';
}

const NAME = /^[a-z][a-z0-9-]{0,62}$/;
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown, min: number, max: number): boolean =>
  Number.isInteger(v) && (v as number) >= min && (v as number) <= max;

/** Structural problems of a spec's job, as `path: message` strings (empty = fine). */
function lightCheck(raw: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const need = (ok: boolean, path: string, what: string): void => {
    if (!ok) problems.push(`${path}: expected ${what}`);
  };
  need(typeof raw['app'] === 'string' && NAME.test(raw['app']), 'app', 'an app name');
  need(isInt(raw['schedule_index'] ?? 0, 0, 63), 'schedule_index', 'an integer 0..63');
  const refs = raw['secret_refs'] ?? [];
  need(
    Array.isArray(refs) && refs.every((r) => typeof r === 'string'),
    'secret_refs',
    'an array of secret refs',
  );
  const job = raw['job'];
  if (!isObject(job)) return [...problems, 'job: expected the job object'];
  need(typeof job['name'] === 'string' && NAME.test(job['name']), 'job/name', 'a job name');
  const schedules = job['schedules'];
  need(
    Array.isArray(schedules) &&
      schedules.length > 0 &&
      schedules.every((s) => typeof s === 'string'),
    'job/schedules',
    'a non-empty array of schedules',
  );
  need(
    typeof job['timezone'] === 'string' && checkTimeZone(job['timezone']) === null,
    'job/timezone',
    'an IANA time zone',
  );
  const req = job['request'];
  if (!isObject(req)) problems.push('job/request: expected an object');
  else {
    need(
      ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(req['method'] as string),
      'job/request/method',
      'an HTTP method',
    );
    need(
      typeof req['url'] === 'string' && /^https?:\/\/[^/]/.test(req['url']),
      'job/request/url',
      'an http(s) URL',
    );
    need(
      isObject(req['headers']) && Object.values(req['headers']).every((v) => typeof v === 'string'),
      'job/request/headers',
      'a string map',
    );
    need(typeof req['body'] === 'string', 'job/request/body', 'a string');
  }
  const policy = job['policy'];
  if (!isObject(policy)) problems.push('job/policy: expected an object');
  else {
    need(
      ['Allow', 'Forbid', 'Replace', 'Enqueue'].includes(policy['concurrency'] as string),
      'job/policy/concurrency',
      'Allow, Forbid or Replace',
    );
    need(
      ['host', 'global'].includes(policy['concurrency_scope'] as string),
      'job/policy/concurrency_scope',
      'host or global',
    );
    need(
      isInt(policy['timeout_seconds'], 1, 600),
      'job/policy/timeout_seconds',
      'an integer 1..600',
    );
    const r = policy['retries'];
    need(
      isObject(r) &&
        isInt(r['max_attempts'], 1, 10) &&
        isInt(r['min_seconds'], 0, 1e9) &&
        isInt(r['max_seconds'], 1, 1e9),
      'job/policy/retries',
      'max_attempts 1..10, min_seconds ≥ 0, max_seconds ≥ 1',
    );
  }
  return problems;
}

/** The spec file path of `<app>.<job>` in `dir`. */
export function specPath(dir: string, target: string): string {
  return join(dir, `${target}.json`);
}

/**
 * Loads and checks `<dir>/<app>.<job>.json`.
 * @throws {SpecError} with a one-line message for a missing, unreadable or corrupt spec.
 */
export async function loadSpec(dir: string, target: string): Promise<JobSpec> {
  const path = specPath(dir, target);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new SpecError(
        `no spec file ${path} for job ${target}: run "cronix apply", or pass --spec-dir / set CRONIX_JOB_SPEC_DIR`,
      );
    }
    throw new SpecError(`cannot read spec file ${path}: ${code ?? String(err)}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new SpecError(`spec file ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(raw)) throw new SpecError(`spec file ${path} must hold a JSON object`);
  const problems = lightCheck(raw);
  if (problems.length > 0) {
    // cold path: the full parser names every problem precisely
    const { parseManifest } = await import('../contract/manifest/parse.js');
    const full = parseManifest({ version: 1, app: raw['app'], jobs: [raw['job']] });
    const detail = full.ok
      ? problems
      : full.errors.map((e) => `${e.path.replace(/^jobs\/0/, 'job')}: ${e.message}`);
    throw new SpecError(`spec file ${path} is invalid: ${detail.slice(0, 5).join('; ')}`);
  }
  const job = raw['job'] as unknown as Job;
  const scheduleIndex = (raw['schedule_index'] as number | undefined) ?? 0;
  const source = job.schedules[scheduleIndex];
  if (source === undefined) {
    throw new SpecError(
      `spec file ${path}: schedule_index ${scheduleIndex} but the job has ${job.schedules.length} schedule(s)`,
    );
  }
  const schedules: Schedule[] = [];
  for (const [k, text] of job.schedules.entries()) {
    const parsed = parseSchedule(text);
    if (!parsed.ok) throw new SpecError(`spec file ${path}: job/schedules/${k}: ${parsed.error}`);
    schedules.push(parsed.schedule);
  }
  if (`${raw['app'] as string}.${job.name}` !== target) {
    throw new SpecError(
      `spec file ${path} describes ${raw['app'] as string}.${job.name}, not ${target}`,
    );
  }
  const refs = (raw['secret_refs'] as string[] | undefined) ?? [];
  return {
    app: raw['app'] as string,
    scheduleIndex,
    secretRefs: refs.length > 0 ? refs : (job.auth?.secret_refs ?? []),
    job,
    schedule: schedules[scheduleIndex] as Schedule,
    schedules,
  };
}
