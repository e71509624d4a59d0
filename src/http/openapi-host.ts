/**
 * The host-mode part of the OpenAPI document (SPEC §15): the report a host sends, its `run`
 * object (§7 field names plus what only a host knows), and the report and ping routes. They
 * carry no API token: the `X-Cron-Signature` of the report secret (§4) authenticates them, or,
 * for a ping, the job's ping token.
 */
import {
  MAX_REPORT_BYTES,
  MAX_REPORT_OUTPUT_BYTES,
  REPORTED_OUTCOMES,
} from '../contract/report.js';
import { error, json, pathParam, ref, time } from './openapi-parts.js';

const int = (description: string) => ({ type: ['integer', 'null'], description });
const text = (description: string) => ({ type: ['string', 'null'], description });

/** Schemas of reports. */
export const HOST_SCHEMAS = {
  ReportedRun: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'run_key', 'app', 'job', 'scheduled_time', 'host', 'started_at'],
    description:
      'A run as a host reports it: the field names of §7 runs, plus host, exit_code, fencing_token, duration_ms and output. Unknown fields are refused; `trigger`, `phase` and `created_at` may be echoed and are decided by the server.',
    properties: {
      id: { type: 'string', format: 'uuid', description: 'The run id; recorded once' },
      run_key: { type: 'string', description: '`<app>/<job>#<fire time>#<change hash>`' },
      app: { type: 'string' },
      job: { type: 'string' },
      schedule_index: int('Which schedule fired; null for a fire with no schedule'),
      scheduled_time: { type: 'string', format: 'date-time', description: 'The nominal fire time' },
      host: { type: 'string', description: 'Who ran it ($CRONIX_HOST_ID or the hostname)' },
      started_at: { type: 'string', format: 'date-time' },
      fencing_token: text('Global-scope jobs: the Redis fencing token held'),
      ended_at: { ...time, description: 'Required in an `ended` report' },
      outcome: {
        enum: [...REPORTED_OUTCOMES, null],
        description: 'Required in an `ended` report, absent in a `started` one',
      },
      exit_code: int("A command job's exit code"),
      attempts: { type: 'integer', minimum: 0 },
      last_status: int('HTTP status of the last attempt'),
      error: text('Why it ended as it did, in a few words'),
      duration_ms: int('Duration of the whole fire'),
      attempt_log: {
        type: 'array',
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['attempt', 'started_at', 'duration_ms'],
          properties: {
            attempt: { type: 'integer', minimum: 1 },
            started_at: { type: 'string', format: 'date-time' },
            duration_ms: { type: 'integer', minimum: 0 },
            status: int('HTTP status'),
            exit_code: int('Command exit code'),
            error: text('Why the attempt failed'),
          },
        },
      },
      output: text(`A command job's output, its last ${MAX_REPORT_OUTPUT_BYTES} bytes`),
      output_truncated: { type: 'boolean' },
    },
  },
  Report: {
    type: 'object',
    additionalProperties: false,
    required: ['kind', 'run'],
    properties: {
      kind: {
        enum: ['started', 'ended'],
        description:
          '`started` once the fire holds its lock; `ended` with the outcome (skipped and duplicate fires send only `ended`)',
      },
      run: ref('ReportedRun'),
      spool_dropped: {
        type: 'integer',
        minimum: 0,
        description: 'Reports the reporter had to drop from its spool since its last send',
      },
    },
  },
  ReportAnswer: {
    type: 'object',
    properties: {
      result: {
        enum: ['recorded', 'ended', 'unchanged'],
        description:
          '`recorded`: a new row (it may have replaced the missed row of its instant); `ended`: its run completed; `unchanged`: a resend',
      },
      run: ref('Run'),
    },
  },
} as const;

const signed = [{ signature: [] }];
const refusals = {
  400: error('not JSON, or not a valid report (the error names the field and the value)'),
  401: error('unsigned, wrongly signed, or signed more than 300 s away from the server clock'),
  404: error('the app or job is not watched by this server'),
  413: error('body larger than 1 MiB'),
  503: error('the ledger could not record it: send it again later'),
};

const ping = (summary: string, extra: object[] = []) => ({
  post: {
    summary,
    description:
      "A run of a watched job whose fires do not run the shim (a cron line, a CI job): `curl -fsS -m 5 --retry 3 -X POST <url>`. Authenticated by the report signature, or by the job's ping token (`?token=` or `X-Cronix-Ping-Token`; `cronix ping-url app/job` prints the URL). The run is the one of the latest expected instant (or `?rid=`, the id `/start` answered); resent pings change nothing.",
    security: [{ signature: [] }, { pingToken: [] }],
    parameters: [
      pathParam('app', 'app'),
      pathParam('job', 'job'),
      ...extra,
      { name: 'host', in: 'query', required: false, schema: { type: 'string' } },
      { name: 'rid', in: 'query', required: false, schema: { type: 'string', format: 'uuid' } },
    ],
    responses: { 200: json(ref('ReportAnswer')), ...refusals },
  },
});

/** The report and ping routes. */
export const HOST_PATHS = {
  '/api/v1/reports': {
    post: {
      summary: 'A host reports a fire of a watched job (SPEC §15)',
      description: `Signed with \`X-Cron-Signature\` by a report secret of \`serve --report-secret-ref\`; no API token. At most ${MAX_REPORT_BYTES} bytes. A run id is recorded once: a resent report answers 200 and changes nothing.`,
      security: signed,
      requestBody: { required: true, ...json(ref('Report')) },
      responses: { 200: json(ref('ReportAnswer')), ...refusals },
    },
  },
  '/api/v1/ping/{app}/{job}': ping('A watched job ran and succeeded'),
  '/api/v1/ping/{app}/{job}/start': ping('A watched job started'),
  '/api/v1/ping/{app}/{job}/fail': ping('A watched job failed'),
  '/api/v1/ping/{app}/{job}/{exit_code}': ping(
    'A watched job ended with this exit code (0: success)',
    [pathParam('exit_code', '0..255')],
  ),
} as const;

/** Security schemes of the host routes. */
export const HOST_SECURITY = {
  signature: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Cron-Signature',
    description: '`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.POST.<path>.<body>">` (SPEC §4)',
  },
  pingToken: { type: 'apiKey', in: 'query', name: 'token' },
} as const;
