/**
 * What `POST /api/v1/jobs/{app}/{job}/trigger` may carry besides its time (SPEC §16 "Run
 * parameters"): the `Idempotency-Key` header — a retried call with the same key returns the
 * first run of that key of the job (kept 24 h), not a second run — and the run's parameters,
 * `"body"` (a string) and `"env"` (names to strings), whose use the daemon checks against what
 * the job allows (`daemon/run-params.ts`).
 */
import type { Context } from 'hono';
import type { TriggerOptions } from '../daemon/core.js';
import { MAX_IDEMPOTENCY_KEY } from '../daemon/store/idempotency-types.js';
import { BadRequest } from './serialize.js';

/** The header, as HTTP names it (matched case-insensitively). */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';

/**
 * The trigger's options from the request and its JSON body; takes `body` and `env` out of
 * `json` (the rest is the trigger's time). 400 naming the header or field for a bad one.
 */
export function triggerOptions(c: Context, json: Record<string, unknown>): TriggerOptions {
  const opts: TriggerOptions = {};
  const body = json['body'];
  const env = json['env'];
  delete json['body'];
  delete json['env'];
  if (body !== undefined) {
    if (typeof body !== 'string') throw new BadRequest('body', '"body" must be a string');
    opts.params = { body };
  }
  if (env !== undefined) {
    if (typeof env !== 'object' || env === null || Array.isArray(env))
      throw new BadRequest('env', '"env" must be an object of names to strings');
    const entries = Object.entries(env as Record<string, unknown>);
    if (entries.length > 64) throw new BadRequest('env', '"env" has more than 64 variables');
    for (const [name, value] of entries)
      if (typeof value !== 'string')
        throw new BadRequest(`env.${name.slice(0, 64)}`, `"env" values must be strings`);
    opts.params = { ...opts.params, env: Object.fromEntries(entries) as Record<string, string> };
  }
  const key = c.req.header(IDEMPOTENCY_HEADER);
  if (key === undefined) return opts;
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY || !/^[\x21-\x7e]+$/.test(key))
    throw new BadRequest(
      IDEMPOTENCY_HEADER,
      `the ${IDEMPOTENCY_HEADER} header must be 1 to ${MAX_IDEMPOTENCY_KEY} printable ASCII characters without spaces`,
    );
  return { ...opts, idempotencyKey: key };
}
