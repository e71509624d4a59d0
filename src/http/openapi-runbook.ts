/** The operator tools' part of the OpenAPI document (SPEC §16): backfills and dead letters. */
import { BACKFILL_STATES } from '../daemon/store/types.js';
import { error, json, pathParam, query, ref, time } from './openapi-parts.js';

/** Schemas of the operator tools. */
export const RUNBOOK_SCHEMAS = {
  Backfill: {
    type: 'object',
    description:
      "A backfill (SPEC §16): the instants of the job in [from, to), fixed when it was created, run in order with at most `parallel` at once through the job's lane; `counts` is its progress, from its runs (`pending`: not run yet, or to be run again because its run ended `crashed`).",
    properties: {
      id: { type: 'string' },
      app: { type: 'string' },
      job: { type: 'string' },
      from: time,
      to: time,
      only_missing: { type: 'boolean' },
      parallel: { type: 'integer' },
      stop_after_failures: { type: ['integer', 'null'] },
      state: { enum: [...BACKFILL_STATES] },
      total: { type: 'integer' },
      counts: {
        type: 'object',
        properties: {
          pending: { type: 'integer' },
          active: { type: 'integer' },
          succeeded: { type: 'integer' },
          failed: { type: 'integer' },
          other: { type: 'integer' },
        },
      },
      created_by: {
        type: 'string',
        description:
          "the caller: a token's name or an SSO user; under --no-auth the client (`cli`, `ui` or `api`)",
      },
      created_at: time,
      ended_at: time,
      reason: { type: ['string', 'null'] },
    },
  },
} as const;

/** Paths of the operator tools. */
export const RUNBOOK_PATHS = {
  '/api/v1/jobs/{app}/{job}/backfills': {
    post: {
      summary: "Backfill a range of the job's instants, or list them (dry run)",
      description:
        'The schedule instants in [from, to) become runs (trigger `backfill`, the run keys of scheduled fires), except those whose run key succeeded and, with `only_missing`, those with an ended run that ran (failed ones included). With `dry_run` nothing is recorded and the run keys are listed; otherwise the backfill starts on the leader.',
      parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          additionalProperties: false,
          required: ['from', 'to'],
          properties: {
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time', description: 'exclusive' },
            only_missing: { type: 'boolean', default: false },
            parallel: { type: 'integer', minimum: 1, maximum: 1024, default: 1 },
            stop_after_failures: { type: 'integer', minimum: 1 },
            dry_run: { type: 'boolean', default: false },
          },
        }),
      },
      responses: {
        200: json({
          type: 'object',
          description: 'the dry run',
          properties: {
            dry_run: { const: true },
            instants: { type: 'integer' },
            left_out: {
              type: 'object',
              properties: { succeeded: { type: 'integer' }, ran: { type: 'integer' } },
            },
            runs: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  scheduled_time: time,
                  schedule_index: { type: 'integer' },
                  run_key: { type: 'string' },
                },
              },
            },
          },
        }),
        202: json({ type: 'object', properties: { backfill: ref('Backfill') } }),
        400: error('invalid body, or a range of more than 100,000 instants'),
        404: error('no such job'),
      },
    },
  },
  '/api/v1/backfills': {
    get: {
      summary: 'Backfills, newest first',
      parameters: [
        query('app', 'only this app'),
        query('job', 'only this job'),
        query('state', BACKFILL_STATES.join(', ')),
        query('limit', 'at most this many (1..1000, default 100)'),
      ],
      responses: {
        200: json({
          type: 'object',
          properties: { backfills: { type: 'array', items: ref('Backfill') } },
        }),
        400: error('bad query'),
      },
    },
  },
  '/api/v1/backfills/{id}': {
    get: {
      summary: 'One backfill with its plan: each instant, its run key and the run that ran it last',
      parameters: [pathParam('id', 'backfill id')],
      responses: {
        200: json(ref('Backfill')),
        404: error('no such backfill'),
      },
    },
  },
  '/api/v1/backfills/{id}/cancel': {
    post: {
      summary: 'Cancel a running backfill (its runs in flight finish)',
      parameters: [pathParam('id', 'backfill id')],
      responses: {
        200: json({ type: 'object', properties: { backfill: ref('Backfill') } }),
        404: error('no such backfill'),
        409: error('already ended'),
      },
    },
  },
  '/api/v1/dead-letters': {
    get: {
      summary: 'Dead letters: runs that ended failed and whose run key has not succeeded since',
      description:
        'The newest failed run (app_rejected, retries_exhausted, crashed, internal_error) of each run key that has not succeeded, unless a newer run of that key is active or failed, or it was dismissed; newest first, with the count per job.',
      parameters: [
        query('app', 'only this app'),
        query('job', 'only this job'),
        query('outcome', 'only these failed outcomes (comma separated, or failed)'),
        query('from', 'scheduled at or after this instant (RFC 3339)'),
        query('to', 'scheduled before this instant (RFC 3339)'),
        query('limit', 'at most this many (1..1000, default 100)'),
        query('before', 'the id of the last dead letter of the previous page'),
      ],
      responses: {
        200: json({
          type: 'object',
          properties: {
            dead_letters: { type: 'array', items: ref('Run') },
            counts: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  app: { type: 'string' },
                  job: { type: 'string' },
                  count: { type: 'integer' },
                },
              },
            },
          },
        }),
        400: error('bad query'),
      },
    },
  },
  '/api/v1/dead-letters/replay': {
    post: {
      summary: 'Replay dead letters by job, outcome and time range (at most `max`, oldest first)',
      description:
        "Each is replayed like `POST /runs/{id}/replay` (the same run key, through the job's lane and overlap policy); a replay that succeeds takes its dead letter out of the view. With `dry_run` nothing is replayed and the dead letters it would replay are listed.",
      requestBody: {
        required: false,
        ...json({
          type: 'object',
          additionalProperties: false,
          properties: {
            app: { type: 'string' },
            job: { type: 'string' },
            outcome: { type: 'string' },
            from: { type: 'string', format: 'date-time' },
            to: { type: 'string', format: 'date-time' },
            max: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
            dry_run: { type: 'boolean', default: false },
          },
        }),
      },
      responses: {
        200: json({
          type: 'object',
          description: 'the dry run',
          properties: {
            dry_run: { const: true },
            dead_letters: { type: 'array', items: ref('Run') },
          },
        }),
        202: json({
          type: 'object',
          properties: {
            replayed: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  dead_letter: { type: 'string' },
                  run: ref('Run'),
                  admission: { type: 'string' },
                  error: { type: 'string' },
                },
              },
            },
          },
        }),
        400: error('invalid body'),
      },
    },
  },
  '/api/v1/dead-letters/dismiss': {
    post: {
      summary: 'Dismiss dead letters with a note (who, why); the runs stay in the ledger',
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          additionalProperties: false,
          required: ['run_ids', 'note'],
          properties: {
            run_ids: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1000 },
            note: { type: 'string', minLength: 1, maxLength: 500 },
          },
        }),
      },
      responses: {
        200: json({
          type: 'object',
          properties: {
            dismissed: { type: 'array', items: { type: 'string' } },
            by: { type: 'string' },
            note: { type: 'string' },
          },
        }),
        400: error('invalid body'),
      },
    },
  },
} as const;
