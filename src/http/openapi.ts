/** The OpenAPI 3.1 document the daemon serves at `/openapi.json`. */
import { RUN_OUTCOMES, RUN_PHASES } from '../daemon/store/types.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const error = (description: string) => ({ description, ...json(ref('Error')) });
const pathParam = (name: string, description: string) => ({
  name,
  in: 'path',
  required: true,
  description,
  schema: { type: 'string' },
});
const time = { type: ['string', 'null'], format: 'date-time' };

/** The document. */
export const OPENAPI = {
  openapi: '3.1.0',
  info: {
    title: 'cronix daemon API',
    version: '1',
    description:
      'Jobs, runs and triggers of `cronix serve` (SPEC §7). Mutations need `Authorization: Bearer <token>` unless the daemon runs with --no-auth on loopback.',
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
          active: { type: 'integer' },
          queued: { type: 'integer' },
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
          last_status: { type: ['integer', 'null'] },
          created_at: time,
          started_at: time,
          ended_at: time,
          due_at: time,
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
        summary: 'Jobs with next fire and state',
        responses: {
          200: json({ type: 'object', properties: { jobs: { type: 'array', items: ref('Job') } } }),
        },
      },
    },
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
    '/api/v1/runs/{id}': {
      get: {
        summary: 'One run',
        parameters: [pathParam('id', 'run id')],
        responses: { 200: json(ref('Run')), 404: error('no such run') },
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
