/** The OpenAPI 3.1 document the daemon serves at `/openapi.json`. */
import { RUN_OUTCOMES, RUN_PHASES } from '../daemon/store/types.js';
import { error, json, pathParam, query, ref, time } from './openapi-parts.js';
import { VIEW_PATHS } from './openapi-views.js';
import { NOTIFY_EVENTS } from '../contract/manifest/defaults.js';
import { NOTIFICATION_STATUSES } from '../daemon/store/types.js';

/** The document. */
export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'cronix daemon API',
    version: '1',
    description:
      'Jobs, runs and triggers of `cronix serve` (SPEC §7) and the views of its web UI (SPEC §13). Mutations need `Authorization: Bearer <token>`, or the web UI session cookie with its `X-CSRF-Token`, unless the daemon runs with --no-auth on loopback. A mutation whose `Origin` is another origin (or `Sec-Fetch-Site: cross-site`) is refused with 403 `forbidden`.',
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
    schemas: {
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
          next_fire: time,
          paused: { type: 'boolean' },
          enabled: { type: 'boolean' },
          last_outcome: { type: ['string', 'null'] },
          recent_outcomes: {
            type: 'array',
            items: { enum: [...RUN_OUTCOMES] },
            description: 'Outcomes of the newest 20 ended runs, newest first',
          },
          active: { type: 'integer' },
          queued: { type: 'integer' },
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
          trigger: { enum: ['schedule', 'catchup', 'manual', 'replay'] },
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
              },
            },
          },
          output_truncated: {
            type: 'boolean',
            description:
              "A command job's output went past max_output_bytes and the rest was dropped",
          },
        },
      },
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
    '/api/v1/runs': {
      get: {
        summary: 'Runs, newest first',
        parameters: ['app', 'job', 'outcome', 'phase', 'limit', 'before'].map((name) => ({
          name,
          in: 'query',
          required: false,
          schema: { type: 'string' },
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
            description: '1: keep streaming new output until the run has ended',
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
        parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
        requestBody: {
          required: false,
          ...json({
            type: 'object',
            additionalProperties: false,
            properties: {
              at: { type: 'string', format: 'date-time' },
              after_seconds: { type: 'integer', minimum: 0 },
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
        summary: 'Pause scheduled fires',
        security: [{ bearer: [] }],
        parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
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
  return cluster ? { ...OPENAPI, paths: { ...OPENAPI.paths, ...CLUSTER_PATH } } : OPENAPI;
}
