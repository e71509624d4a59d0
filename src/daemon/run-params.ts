/**
 * Run parameters (SPEC §16): what a manual trigger may give its run, checked against what the
 * job allows (`jobs[].manual`), and the job as that run sends it. An HTTP job with
 * `manual.allow_body` takes a body (at most {@link MAX_PARAM_BODY_BYTES}); a command job takes
 * environment variables named in `manual.env_allowlist` (values at most
 * {@link MAX_PARAM_ENV_BYTES}, no NUL), set on top of the command's `env`. The parameters are
 * recorded with the run; retries, replays of it and a restart send the same.
 */
import type { Job } from '../contract/manifest/types.js';
import { echo } from '../contract/echo.js';
import type { RegisteredJob } from './registry.js';
import type { RunParams } from './store/types.js';

/** Largest body a manual trigger may give, bytes (UTF-8). */
export const MAX_PARAM_BODY_BYTES = 65_536;
/** Largest value of one environment variable a manual trigger may give, bytes. */
export const MAX_PARAM_ENV_BYTES = 4096;

class Refused extends Error {}
const refuse = (msg: string): never => {
  throw new Refused(msg);
};

/** Checks `params` against what `job` allows: null, or what is wrong (for a 400). */
export function paramsProblem(job: RegisteredJob, params: RunParams): string | null {
  try {
    check(job, params);
    return null;
  } catch (err) {
    if (err instanceof Refused) return err.message;
    throw err;
  }
}

function check(job: RegisteredJob, params: RunParams): void {
  const manual = job.job.manual;
  if (params.body !== undefined) {
    if (job.job.request === undefined) refuse(`${job.key} is a command job: it takes no "body"`);
    if (!manual?.allow_body)
      refuse(`${job.key} does not allow a body (its manifest has no manual.allow_body)`);
    const bytes = Buffer.byteLength(params.body, 'utf8');
    if (bytes > MAX_PARAM_BODY_BYTES)
      refuse(`"body" is ${bytes} bytes; at most ${MAX_PARAM_BODY_BYTES}`);
  }
  if (params.env !== undefined) {
    if (job.job.command === undefined) refuse(`${job.key} is an HTTP job: it takes no "env"`);
    const allowed = new Set(manual?.env_allowlist ?? []);
    for (const [name, value] of Object.entries(params.env)) {
      if (!allowed.has(name))
        refuse(
          `"env" ${echo(name)} is not in ${job.key}'s manual.env_allowlist (${[...allowed].join(', ') || 'empty'})`,
        );
      if (value.includes('\0')) refuse(`"env" ${name} contains a NUL character`);
      if (Buffer.byteLength(value, 'utf8') > MAX_PARAM_ENV_BYTES)
        refuse(`"env" ${name} is longer than ${MAX_PARAM_ENV_BYTES} bytes`);
    }
  }
}

/** The job as a run with `params` sends it (the job itself when there are none). */
export function withParams(job: Job, params: RunParams | undefined): Job {
  if (!params) return job;
  if (params.body !== undefined && job.request)
    return { ...job, request: { ...job.request, body: params.body } };
  if (params.env !== undefined && job.command)
    return { ...job, command: { ...job.command, env: { ...job.command.env, ...params.env } } };
  return job;
}
