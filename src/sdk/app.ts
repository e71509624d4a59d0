/**
 * Declaring an app's jobs in code. The builder only assembles the raw v1
 * manifest object; all validation, defaults and normalization come from the
 * contract's `parseManifest`, so a code-declared app and a JSON manifest can
 * never disagree.
 */
import { parseManifest } from '../contract/manifest/index.js';
// the types straight from types.ts, not through the index: the SDK's published declarations
// must not reach schema.ts, whose types are TypeBox's (not installed with @cronix/sdk)
import type { HttpMethod, Manifest, PolicyInput } from '../contract/manifest/types.js';

/** HTTP methods a job may use (SPEC §2). */
export type JobMethod = HttpMethod;

/** Job policy exactly as written in a manifest (snake_case, SPEC §2 and the §8 extensions). */
export type { PolicyInput };

/** Common fields of a job declaration. */
interface JobBase {
  /** `^[a-z][a-z0-9-]{0,62}$`, unique within the app. */
  name: string;
  /** IANA zone; default `UTC`. */
  timezone?: string;
  /** Default `POST`. */
  method?: JobMethod;
  headers?: Record<string, string>;
  /** Sent verbatim on every attempt; default empty. */
  body?: string;
  policy?: PolicyInput;
  /** Overrides the app's `secretRefs` for this job. */
  secretRefs?: string[];
  /** Daemon-mode extension; default `true`. */
  enabled?: boolean;
}

/** Exactly one of `schedule` / `schedules`. */
type ScheduleField =
  { schedule: string; schedules?: never } | { schedules: string[]; schedule?: never };

/** Exactly one of `path` (joined to the app's `baseUrl`) / `url`. */
type TargetField = { path: string; url?: never } | { url: string; path?: never };

/** A job declaration for {@link AppBuilder.job}. */
export type JobDeclaration = JobBase & ScheduleField & TargetField;

/** Options of {@link defineApp}. */
export interface AppOptions {
  /** Secret refs (`env:NAME`, `file:/path`, `raw:…`) put in every job's `auth.secret_refs`. */
  secretRefs?: string[];
  /** Prefix for jobs declared with `path`, e.g. `https://billing.internal`. */
  baseUrl?: string;
}

/** One problem found while building the manifest, located by slash path. */
export interface BuildError {
  path: string;
  message: string;
}

/** Thrown by {@link AppBuilder.toManifest} when the declared app is not a valid manifest. */
export class InvalidManifestError extends Error {
  /** Every problem, not only the first. */
  readonly errors: readonly BuildError[];

  constructor(app: string, errors: readonly BuildError[]) {
    super(
      `invalid manifest for app "${app}":\n` +
        errors.map((e) => `  ${e.path || '(root)'}: ${e.message}`).join('\n'),
    );
    this.name = 'InvalidManifestError';
    this.errors = errors;
  }
}

function joinUrl(baseUrl: string, path: string): string {
  return baseUrl.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** Chainable declaration of one app's jobs. Create it with {@link defineApp}. */
export class AppBuilder {
  readonly name: string;
  readonly options: Readonly<AppOptions>;
  readonly #jobs: JobDeclaration[] = [];

  constructor(name: string, options: AppOptions = {}) {
    this.name = name;
    this.options = { ...options };
  }

  /** Declares a job; returns the builder for chaining. Validation happens in `toManifest`. */
  job(declaration: JobDeclaration): this {
    this.#jobs.push({ ...declaration });
    return this;
  }

  /** The declarations so far, in declaration order. */
  get jobs(): readonly JobDeclaration[] {
    return this.#jobs;
  }

  /** Builds the raw (un-normalized) manifest object, plus builder-level problems. */
  toRawManifest(): { raw: Record<string, unknown>; errors: BuildError[] } {
    const errors: BuildError[] = [];
    const jobs = this.#jobs.map((job, i) => {
      const request: Record<string, unknown> = {};
      if (job.method !== undefined) request['method'] = job.method;
      if (job.path !== undefined && job.url !== undefined) {
        errors.push({
          path: `jobs/${i}/request/url`,
          message: 'give either path or url, not both',
        });
      } else if (job.path !== undefined) {
        if (this.options.baseUrl === undefined) {
          errors.push({
            path: `jobs/${i}/request/url`,
            message: `job "${job.name}" gives path "${job.path}" but the app has no baseUrl; set defineApp(name, { baseUrl }) or give a full url`,
          });
        } else {
          request['url'] = joinUrl(this.options.baseUrl, job.path);
        }
      } else if (job.url !== undefined) {
        request['url'] = job.url;
      }
      if (job.headers !== undefined) request['headers'] = { ...job.headers };
      if (job.body !== undefined) request['body'] = job.body;

      const out: Record<string, unknown> = { name: job.name };
      if (job.schedule !== undefined) out['schedule'] = job.schedule;
      if (job.schedules !== undefined) out['schedules'] = [...job.schedules];
      if (job.timezone !== undefined) out['timezone'] = job.timezone;
      out['request'] = request;
      if (job.policy !== undefined) out['policy'] = structuredClone(job.policy);
      const refs = job.secretRefs ?? this.options.secretRefs;
      if (refs !== undefined) out['auth'] = { secret_refs: [...refs] };
      if (job.enabled !== undefined) out['enabled'] = job.enabled;
      return out;
    });
    return { raw: { version: 1, app: this.name, jobs }, errors };
  }

  /**
   * Validates and normalizes the declared app through the contract's
   * `parseManifest`. Throws {@link InvalidManifestError} listing every
   * `path: message` when the declaration is not a valid manifest.
   */
  toManifest(): Manifest {
    const { raw, errors } = this.toRawManifest();
    const parsed = parseManifest(raw);
    // The builder's own message is more specific than "required field is missing" at the same path.
    const known = new Set(errors.map((e) => e.path));
    const all = parsed.ok
      ? errors
      : [...errors, ...parsed.errors.filter((e) => !known.has(e.path))];
    if (!parsed.ok || all.length > 0) throw new InvalidManifestError(this.name, all);
    return parsed.manifest;
  }
}

/**
 * Starts declaring an app's jobs in code:
 * `defineApp('billing', { baseUrl, secretRefs }).job({ ... }).toManifest()`.
 */
export function defineApp(name: string, options: AppOptions = {}): AppBuilder {
  return new AppBuilder(name, options);
}
