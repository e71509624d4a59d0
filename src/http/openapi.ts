/** The OpenAPI 3.1 document the daemon serves at `/openapi.json`. */
import { RUN_OUTCOMES, RUN_PHASES } from '../daemon/store/types.js';
import { error, json, pathParam, query, ref, time, withSecurity } from './openapi-parts.js';
import { VIEW_PATHS } from './openapi-views.js';
import { ACCESS_PATHS, ACCESS_SCHEMAS } from './openapi-access.js';
import { HOST_PATHS, HOST_SCHEMAS, HOST_SECURITY } from './openapi-host.js';
import { RUNBOOK_PATHS, RUNBOOK_SCHEMAS } from './openapi-runbook.js';
import { FREEZE_PATHS, FREEZE_SCHEMAS } from './openapi-freezes.js';
import { SKIP_PATHS, SKIP_SCHEMAS } from './openapi-skips.js';
import { SERVICE_PATHS } from './openapi-services.js';
import { NOTIFY_EVENTS } from '../contract/manifest/defaults.js';
import { NOTIFICATION_STATUSES } from '../daemon/store/types.js';

/** The document. */
export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'cronix daemon API',
    version: '1',
    description:
      'Jobs, runs and triggers of `cronix serve` (SPEC §7) and the views of its web UI (SPEC §13). Every `/api/v1` route, reads included, needs `Authorization: Bearer <token>` or the web UI session cookie (mutations with the cookie also its `X-CSRF-Token`), unless the daemon runs with --no-auth on loopback; `/healthz`, `/openapi.json` and `/metrics` (unless `serve --metrics-auth`) are open. Each operation states the role it needs in `x-cronix-role` (SPEC §18: `viewer` every read but run output and the tokens, `operator` the verbs within the apps of the token, `admin` everything; `public` needs no credential); a request whose role is below is answered 403 `forbidden` naming the role needed, and every mutation is written to the audit log (`GET /api/v1/audit`). Wrong tokens are slowed per client address (429 with `Retry-After`). A request whose `Host` is not a name of the daemon (loopback, the listen address, `--allowed-host`, `--public-url`) is refused with 421 `misdirected_request`; a mutation whose `Origin` is another origin (or `Sec-Fetch-Site: cross-site`) with 403 `forbidden`.',
  },
  components: {
    securitySchemes: {
      bearer: { type: 'http', scheme: 'bearer' },
      session: { type: 'apiKey', in: 'cookie', name: 'cronix_session' },
      ...HOST_SECURITY,
    },
    schemas: {
      ...RUNBOOK_SCHEMAS,
      ...FREEZE_SCHEMAS,
      ...SKIP_SCHEMAS,
      Error: {
        type: 'object',
        required: ['error'],
        properties: {
          error: {
            type: 'object',
            required: ['code', 'message'],
            properties: {
              code: { type: 'string' },
              message: { type: 'string' },
              path: { type: 'string' },
            },
          },
        },
      },
      Job: {
        type: 'object',
        properties: {
          app: { type: 'string' },
          job: { type: 'string' },
          schedules: { type: 'array', items: { type: 'string' } },
          timezone: { type: 'string' },
          next_fire: { ...time, description: 'null while the job is paused or disabled' },
          paused: { type: 'boolean' },
          pause_note: ref('PauseNote'),
          skips: {
            type: 'array',
            items: ref('Skip'),
            description:
              'Fire instants skipped (`cronix skip`) whose fire has not come, earliest first',
          },
          enabled: { type: 'boolean' },
          last_outcome: { type: ['string', 'null'] },
          recent_outcomes: {
            type: 'array',
            items: { enum: [...RUN_OUTCOMES] },
            description: 'Outcomes of the newest 20 ended runs, newest first',
          },
          active: { type: 'integer' },
          queued: { type: 'integer' },
          fired_by: {
            enum: ['daemon', 'host'],
            description: '`host`: a watched job (serve --watch), fired by host schedulers',
          },
          last_report: {
            type: ['object', 'null'],
            description: 'Watched jobs: the newest reported run, its host and when it came',
            properties: { run_id: { type: 'string' }, host: { type: 'string' }, at: time },
          },
        },
      },
      Notification: {
        type: 'object',
        description:
          'One notification of one event to one notifier; `status` pending (retried with backoff for up to 10 minutes), delivered or failed. Never holds a URL, credential or signature.',
        properties: {
          id: { type: 'string', description: 'Sent as X-Cron-Notification-Id' },
          event: { enum: [...NOTIFY_EVENTS] },
          app: { type: 'string' },
          job: { type: 'string' },
          run_id: { type: 'string' },
          notifier: { type: 'string' },
          notifier_type: { enum: ['webhook', 'smtp'] },
          count: { type: 'integer', description: 'Events this message stands for (grouping)' },
          text: { type: 'string' },
          status: { enum: [...NOTIFICATION_STATUSES] },
          attempts: { type: 'integer' },
          last_status: { type: ['integer', 'null'] },
          last_error: { type: ['string', 'null'] },
          created_at: time,
          next_attempt_at: time,
          ended_at: time,
        },
      },
      Session: {
        type: 'object',
        properties: {
          auth: { enum: ['token', 'none'], description: '`none` with --no-auth' },
          authenticated: { type: 'boolean' },
          who: { type: ['string', 'null'], description: 'The token name or SSO user signed in' },
          role: { enum: ['viewer', 'operator', 'admin', null] },
          apps: {
            type: 'array',
            items: { type: 'string' },
            description:
              'The apps the session may act on (verbs, run output) with its role; empty: every app',
          },
          sso: {
            type: 'boolean',
            description: 'Single sign-on is configured (`/api/v1/sso/login`)',
          },
          csrf_token: {
            type: ['string', 'null'],
            description: 'Send as `X-CSRF-Token` on mutations made with the session cookie',
          },
          expires_at: time,
        },
      },
      Run: {
        type: 'object',
        properties: {
          id: { type: 'string' },
          run_key: { type: 'string' },
          app: { type: 'string' },
          job: { type: 'string' },
          schedule_index: { type: ['integer', 'null'] },
          scheduled_time: time,
          trigger: {
            enum: ['schedule', 'catchup', 'manual', 'replay', 'host', 'backfill', 'service'],
          },
          phase: { enum: [...RUN_PHASES] },
          outcome: { enum: [...RUN_OUTCOMES, null] },
          attempts: { type: 'integer' },
          last_status: {
            type: ['integer', 'null'],
            description: "The last attempt's HTTP status, or a command job's exit code",
          },
          created_at: time,
          started_at: time,
          ended_at: time,
          due_at: time,
          duration_ms: {
            type: ['integer', 'null'],
            description: 'ended_at − started_at, when both are set',
          },
          error: {
            type: ['string', 'null'],
            description:
              'Why the run ended as it did, in a few words (`HTTP 503`, `connect ECONNREFUSED 127.0.0.1:8080`, `cancelled`); null for a success. Never a secret.',
          },
          attempt_log: {
            type: 'array',
            description: 'Every attempt sent, in order.',
            items: {
              type: 'object',
              properties: {
                attempt: { type: 'integer' },
                started_at: time,
                duration_ms: { type: 'integer' },
                status: {
                  type: ['integer', 'null'],
                  description: 'HTTP status, or exit code (null: killed by a signal)',
                },
                error: { type: ['string', 'null'] },
                traceparent: {
                  type: ['string', 'null'],
                  description:
                    "HTTP: the W3C traceparent this attempt sent (its span id is the attempt's)",
                },
                response: {
                  type: ['string', 'null'],
                  description:
                    'HTTP: the first 4 KiB of the response body, secrets redacted; null when none came',
                },
              },
            },
          },
          output_truncated: {
            type: 'boolean',
            description:
              "A command job's output went past max_output_bytes and the rest was dropped",
          },
          output_lost: {
            type: 'boolean',
            description:
              "Part of a command job's output could not be written (a full disk, an I/O error); the run's outcome is the command's",
          },
          output_error: {
            type: ['string', 'null'],
            description: 'Why the output was lost, e.g. `ENOSPC: no space left on device`',
          },
          host: { type: ['string', 'null'], description: 'Host runs: who reported it' },
          exit_code: { type: ['integer', 'null'], description: "A host command run's exit code" },
          clock_skewed: {
            type: 'boolean',
            description: "The reporting host's clock was more than 60 s off the server's",
          },
          clock_skew_seconds: {
            type: ['number', 'null'],
            description: 'Server minus host clock when flagged',
          },
          lateness_seconds: {
            type: ['number', 'null'],
            description: 'A host run that started later than its watch grace: by how much',
          },
          fencing_token: { type: ['string', 'null'] },
          params: {
            type: ['object', 'null'],
            description:
              "A manual run's parameters (SPEC §16): `body` (HTTP jobs with manual.allow_body) and `env` (command jobs, names in manual.env_allowlist); null without any",
            properties: {
              body: { type: 'string' },
              env: { type: 'object', additionalProperties: { type: 'string' } },
            },
          },
          waiting_for: {
            type: ['string', 'null'],
            description:
              'What a launched run waits for before its next attempt: `rate limit <key> (<n>/s)` while its policy.rate holds it back; null otherwise (and on a standby, which does not run it)',
          },
        },
      },
      ...ACCESS_SCHEMAS,
      ...HOST_SCHEMAS,
      Admission: {
        type: 'object',
        properties: {
          run: ref('Run'),
          admission: { enum: ['started', 'queued', 'skipped', 'queue_full', 'scheduled'] },
        },
      },
    },
  },
  paths: {
    '/healthz': { get: { summary: 'Liveness', responses: { 200: { description: 'ok' } } } },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics',
        responses: { 200: { description: 'text exposition format' } },
      },
    },
    '/api/v1/jobs': {
      get: {
        summary: 'Jobs with next fire, state and last 20 outcomes, sorted by app and job',
        description:
          'One store query for every listed job. Without `limit` every job is listed; `total` counts all of them.',
        parameters: [
          query('offset', 'jobs to skip (default 0)'),
          query('limit', 'at most this many jobs (1..100000)'),
        ],
        responses: {
          200: json({
            type: 'object',
            properties: {
              jobs: { type: 'array', items: ref('Job') },
              total: { type: 'integer' },
            },
          }),
          400: error('invalid offset or limit'),
        },
      },
    },
    ...VIEW_PATHS,
    ...ACCESS_PATHS,
    ...HOST_PATHS,
    ...RUNBOOK_PATHS,
    ...FREEZE_PATHS,
    ...SKIP_PATHS,
    '/api/v1/runs': {
      get: {
        summary: 'Runs, newest first',
        parameters: ['app', 'job', 'outcome', 'phase', 'limit', 'before'].map((name) => ({
          name,
          in: 'query',
          required: false,
          schema: { type: 'string' },
          ...(name === 'outcome'
            ? {
                description:
                  'One outcome, several separated by commas (`app_rejected,crashed`), or `failed` (app_rejected, retries_exhausted, crashed, internal_error)',
              }
            : {}),
        })),
        responses: {
          200: json({ type: 'object', properties: { runs: { type: 'array', items: ref('Run') } } }),
          400: error('invalid filter'),
        },
      },
    },
    '/api/v1/notifications': {
      get: {
        summary: 'Notifications (SPEC §12), newest first, with their delivery state',
        parameters: [
          query('app', 'only this app'),
          query('job', 'only this job'),
          { name: 'event', in: 'query', required: false, schema: { enum: [...NOTIFY_EVENTS] } },
          {
            name: 'status',
            in: 'query',
            required: false,
            schema: { enum: [...NOTIFICATION_STATUSES] },
          },
          query('limit', '1..1000, default 100'),
          query('before', 'id of the last notification of the previous page'),
        ],
        responses: {
          200: json({
            type: 'object',
            properties: { notifications: { type: 'array', items: ref('Notification') } },
          }),
          400: error('invalid filter'),
        },
      },
    },
    '/api/v1/runs/{id}': {
      get: {
        summary: 'One run',
        parameters: [pathParam('id', 'run id')],
        responses: { 200: json(ref('Run')), 404: error('no such run') },
      },
    },
    '/api/v1/runs/{id}/log': {
      get: {
        summary: "A command run's captured output (stdout and stderr, secrets redacted)",
        parameters: [
          pathParam('id', 'run id'),
          {
            name: 'follow',
            in: 'query',
            required: false,
            description:
              '1: keep streaming new output until the run has ended (or the token or session that opened it is revoked or expires: a last cronix line says so)',
            schema: { enum: ['0', '1', 'true', 'false'] },
          },
        ],
        responses: {
          200: {
            description: 'the output',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          400: error('bad query'),
          404: error('no such run, or not a command run'),
        },
      },
    },
    '/api/v1/jobs/{app}/{job}/trigger': {
      post: {
        summary: 'Trigger a run now, at an instant, or after a delay',
        security: [{ bearer: [] }],
        parameters: [
          pathParam('app', 'app'),
          pathParam('job', 'job'),
          {
            name: 'Idempotency-Key',
            in: 'header',
            required: false,
            description:
              'A retried call with the same key (per job, kept 24 h) answers with the first run and its admission, even while that run is in flight; never a second run, never 409. 1–255 printable ASCII characters.',
            schema: { type: 'string', minLength: 1, maxLength: 255 },
          },
        ],
        requestBody: {
          required: false,
          ...json({
            type: 'object',
            additionalProperties: false,
            properties: {
              at: { type: 'string', format: 'date-time' },
              after_seconds: { type: 'integer', minimum: 0 },
              body: {
                type: 'string',
                maxLength: 65536,
                description:
                  "HTTP jobs with manual.allow_body: the run's request body (at most 65,536 bytes)",
              },
              env: {
                type: 'object',
                maxProperties: 64,
                additionalProperties: { type: 'string', maxLength: 4096 },
                description:
                  'Command jobs: environment variables named in manual.env_allowlist (values at most 4,096 bytes)',
              },
            },
          }),
        },
        responses: {
          202: json(ref('Admission')),
          400: error('invalid body'),
          401: error('no or wrong token'),
          404: error('no such job'),
          413: error('body too large'),
        },
      },
    },
    '/api/v1/jobs/{app}/{job}/pause': {
      post: {
        summary: 'Pause scheduled fires, with an optional note (why; who is recorded)',
        security: [{ bearer: [] }],
        parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
        requestBody: {
          required: false,
          ...json({
            type: 'object',
            additionalProperties: false,
            properties: { reason: { type: 'string', minLength: 1, maxLength: 500 } },
          }),
        },
        responses: {
          200: { description: 'paused' },
          401: error('unauthorized'),
          404: error('no such job'),
        },
      },
    },
    '/api/v1/jobs/{app}/{job}/resume': {
      post: {
        summary: 'Resume scheduled fires',
        security: [{ bearer: [] }],
        parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
        responses: {
          200: { description: 'resumed' },
          401: error('unauthorized'),
          404: error('no such job'),
        },
      },
    },
    '/api/v1/runs/{id}/cancel': {
      post: {
        summary: 'Cancel a queued, delayed or running run',
        security: [{ bearer: [] }],
        parameters: [pathParam('id', 'run id')],
        responses: {
          200: json({ type: 'object', properties: { run: ref('Run') } }),
          401: error('unauthorized'),
          404: error('no such run'),
          409: error('already ended'),
        },
      },
    },
    '/api/v1/runs/{id}/replay': {
      post: {
        summary: 'A new run for an ended one',
        security: [{ bearer: [] }],
        parameters: [pathParam('id', 'run id')],
        responses: {
          202: json(ref('Admission')),
          401: error('unauthorized'),
          404: error('no such run'),
          409: error('not ended'),
        },
      },
    },
  },
} as const;

/** `GET /api/v1/cluster`: in the document only when the daemon is a replica of a cluster (SPEC §10). */
export const CLUSTER_PATH = {
  '/api/v1/cluster': {
    get: {
      summary: 'This replica, the leader and the replicas seen (high availability)',
      responses: {
        200: json({
          type: 'object',
          properties: {
            self: {
              type: 'object',
              properties: {
                replica: { type: 'string' },
                role: { enum: ['leader', 'standby'] },
              },
            },
            leader: {
              type: ['object', 'null'],
              properties: {
                replica: { type: 'string' },
                epoch: { type: 'integer' },
                lease_expires_at: time,
              },
            },
            replicas: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  replica: { type: 'string' },
                  role: { type: 'string' },
                  last_seen: time,
                },
              },
            },
          },
        }),
      },
    },
  },
} as const;

/** The document a daemon serves: with the cluster path when it is a replica of one. */
export function openApiFor(cluster: boolean): unknown {
  return cluster ? CLUSTER_DOC : DOC;
}

const DOC = { ...OPENAPI, paths: withSecurity({ ...OPENAPI.paths, ...SERVICE_PATHS }) };
const CLUSTER_DOC = {
  ...OPENAPI,
  paths: withSecurity({ ...OPENAPI.paths, ...SERVICE_PATHS, ...CLUSTER_PATH }),
};
