/**
 * The OpenAPI paths of the views the web UI reads (SPEC §13), part of
 * `/openapi.json`: one job, its next fires, stats, upcoming fires, a run's
 * request, the event stream and the login session.
 */
import { error, json, pathParam, query, ref, time } from './openapi-parts.js';

/** Paths, merged into the document's `paths`. */
export const VIEW_PATHS = {
  '/api/v1/jobs/{app}/{job}': {
    get: {
      summary: 'One job: the list fields plus its effective policy and request',
      description:
        'Header values are shown only for names that describe the request (Accept*, Cache-Control, Content-Encoding, Content-Language, Content-Type, Pragma, Prefer, User-Agent); any other value, every header of `request.headers_from_secrets`, every query value but those of paging, dates, format, locale and the like (docs/daemon.md), the URL user info and fragment are shown as `(hidden)`. `headers_from_secrets` lists those names. Secret refs are never shown; `signed` says whether the job has any.',
      parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
      responses: {
        200: json({
          allOf: [
            ref('Job'),
            {
              type: 'object',
              properties: {
                policy: { type: 'object' },
                request: {
                  type: 'object',
                  properties: {
                    method: { type: 'string' },
                    url: { type: 'string' },
                    headers: { type: 'object', additionalProperties: { type: 'string' } },
                    headers_from_secrets: { type: 'array', items: { type: 'string' } },
                  },
                },
                signed: { type: 'boolean' },
                notify: {
                  type: 'array',
                  description: 'Its notify entries (SPEC §12) with their defaults applied',
                  items: {
                    type: 'object',
                    properties: {
                      to: { type: 'string' },
                      type: { type: 'string', enum: ['webhook', 'smtp'] },
                      on: { type: 'array', items: { type: 'string' } },
                      slow_after_seconds: { type: 'integer' },
                      repeat_every_seconds: { type: 'integer' },
                    },
                  },
                },
              },
            },
          ],
        }),
        404: error('no such job'),
      },
    },
  },
  '/api/v1/jobs/{app}/{job}/next': {
    get: {
      summary: 'The next fires of a job across its schedules, DST transitions marked',
      parameters: [
        pathParam('app', 'app'),
        pathParam('job', 'job'),
        query('count', 'how many fires (1..100, default 10)'),
      ],
      responses: {
        200: json({
          type: 'object',
          properties: {
            app: { type: 'string' },
            job: { type: 'string' },
            timezone: { type: 'string' },
            fires: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  utc: time,
                  local: { type: 'string', description: 'RFC 3339 in the job’s zone' },
                  schedule_indexes: { type: 'array', items: { type: 'integer' } },
                  transition: {
                    type: ['object', 'null'],
                    description:
                      'The zone’s offset changed since the previous fire (or since now): the transition instant and the offsets',
                    properties: {
                      at: time,
                      before: { type: 'string' },
                      after: { type: 'string' },
                      direction: { enum: ['forward', 'back'] },
                    },
                  },
                },
              },
            },
          },
        }),
        400: error('invalid count'),
        404: error('no such job'),
      },
    },
  },
  '/api/v1/stats': {
    get: {
      summary: 'Counts by outcome per hour, completeness per job, what needs attention',
      description:
        'Ended runs by scheduled time over the last `hours` (the current hour included). Completeness = succeeded ÷ ended runs triggered by the schedule or catch-up (missed and skipped count). Attention: last run failed (app_rejected, retries_exhausted, crashed, internal_error), missed fires in the window, or paused.',
      parameters: [
        query('hours', '1..168, default 24'),
        query('limit', 'entries of completeness and attention (1..10000, default 20)'),
      ],
      responses: {
        200: json({
          type: 'object',
          properties: {
            since: time,
            until: time,
            hours: {
              type: 'array',
              items: {
                type: 'object',
                properties: { start: time, counts: { type: 'object' } },
              },
            },
            totals: { type: 'object', description: 'outcome → count' },
            completeness: {
              type: 'array',
              description: 'lowest first',
              items: {
                type: 'object',
                properties: {
                  app: { type: 'string' },
                  job: { type: 'string' },
                  expected: { type: 'integer' },
                  succeeded: { type: 'integer' },
                  ratio: { type: 'number' },
                },
              },
            },
            completeness_jobs: { type: 'integer' },
            attention: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  app: { type: 'string' },
                  job: { type: 'string' },
                  reasons: {
                    type: 'array',
                    items: { enum: ['last_failed', 'missed', 'paused'] },
                  },
                  last_outcome: { type: ['string', 'null'] },
                  missed: { type: 'integer' },
                },
              },
            },
            attention_total: { type: 'integer' },
          },
        }),
        400: error('invalid hours or limit'),
      },
    },
  },
  '/api/v1/upcoming': {
    get: {
      summary: 'The next fires across all enabled jobs, soonest first',
      parameters: [
        query('hours', 'look-ahead, 1..168, default 24'),
        query('limit', '1..1000, default 50'),
      ],
      responses: {
        200: json({
          type: 'object',
          properties: {
            from: time,
            until: time,
            fires: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  app: { type: 'string' },
                  job: { type: 'string' },
                  schedule_index: { type: 'integer' },
                  timezone: { type: 'string' },
                  utc: time,
                  paused: { type: 'boolean' },
                },
              },
            },
            more: { type: 'boolean', description: 'more fires follow within the window' },
          },
        }),
        400: error('invalid hours or limit'),
      },
    },
  },
  '/api/v1/runs/{id}/request': {
    get: {
      summary: 'The request a run sent: method, URL and headers, never the signature',
      description:
        'Reconstructed from the run and the job as loaded now. `X-Cron-Signature` and the headers of `request.headers_from_secrets` are `(hidden)`; static headers and URL query values off the allowlists of GET /api/v1/jobs/{app}/{job} are `(hidden)`.',
      parameters: [pathParam('id', 'run id')],
      responses: {
        200: json({
          type: 'object',
          properties: {
            run: { type: 'string' },
            method: { type: 'string' },
            url: { type: 'string' },
            body_bytes: { type: 'integer' },
            headers: { type: 'object', additionalProperties: { type: 'string' } },
            note: { type: 'string' },
          },
        }),
        404: error('no such run, or its job is no longer loaded'),
      },
    },
  },
  '/api/v1/events': {
    get: {
      summary: 'Live run and job changes (Server-Sent Events), resumable with Last-Event-ID',
      description:
        'Events: `ready` {boot, seq} first; `run` {change: recorded|started|ended, run}; `job` {app, job, paused}; `jobs` {jobs} after a reload; `notification` {notification} when one is recorded and after each delivery attempt (the shape of GET /api/v1/notifications); `reset` {} when the events after `Last-Event-ID` cannot be replayed (reload instead). Ids are `<boot>.<seq>`; the newest 2,000 are kept for resumption. A comment line every 15 s keeps proxies from closing the stream. The stream ends within seconds once the token or session that opened it is revoked or expires.',
      parameters: [
        query('app', 'only this app’s run, job and notification events'),
        query('job', 'only this job’s'),
        {
          name: 'Last-Event-ID',
          in: 'header',
          required: false,
          schema: { type: 'string' },
          description: 'resume after this event (browsers send it when they reconnect)',
        },
      ],
      responses: {
        200: { description: 'text/event-stream' },
        400: error('unknown query parameter'),
      },
    },
  },
  '/api/v1/session': {
    get: {
      summary: 'The web UI session of this request (cookie `cronix_session`)',
      responses: { 200: json(ref('Session')) },
    },
    post: {
      summary: 'Log in: the API token for an HttpOnly, SameSite=Strict session cookie (12 h)',
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['token'],
          properties: { token: { type: 'string' } },
        }),
      },
      responses: {
        200: json(ref('Session')),
        400: error('no token given'),
        401: error('wrong token'),
        409: error('the daemon runs with --no-auth'),
      },
    },
    delete: {
      summary: 'Log out: the cookie is cleared and revoked',
      responses: { 200: json(ref('Session')) },
    },
  },
} as const;
