/** The skip route's part of the OpenAPI document (SPEC §16 "Calendars"), see `skips.ts`. */
import { error, json, pathParam, ref, time } from './openapi-parts.js';

/** Schemas of the skip route. */
export const SKIP_SCHEMAS = {
  Skip: {
    type: 'object',
    description:
      'A skipped fire instant (SPEC §16): when the fire of `at` comes (scheduled, or caught up after downtime) it is recorded `skipped` with `error` `skip: by <who>`, and the skip is gone. Manual triggers and replays are not affected.',
    properties: {
      app: { type: 'string' },
      job: { type: 'string' },
      at: time,
      by: { type: 'string', description: "`cli`, `ui`, `api` or the token's name" },
      since: time,
    },
  },
} as const;

const skipAnswer = {
  type: 'object',
  properties: { skip: ref('Skip'), created: { type: 'boolean' } },
} as const;

/** Paths of the skip route. */
export const SKIP_PATHS = {
  '/api/v1/jobs/{app}/{job}/skip': {
    post: {
      summary: "Skip the job's next fire, or one fire instant",
      description:
        'The skip is durable before the answer (a restart keeps it). A fire already planned ahead of its instant ends `skipped` at once. Asking again for an instant already skipped answers that skip (200, `created` false): a retried request skips one instant, not two.',
      parameters: [pathParam('app', 'app'), pathParam('job', 'job')],
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          additionalProperties: false,
          description: 'exactly one of `next` and `at`',
          properties: {
            next: { const: true, description: 'the next fire of the job' },
            at: {
              type: 'string',
              format: 'date-time',
              description: "a future fire instant of one of the job's schedules",
            },
          },
        }),
      },
      responses: {
        201: json(skipAnswer),
        200: json(skipAnswer),
        400: error('invalid body, or `at` is not a future fire of the job'),
        404: error('no such job'),
        409: error('the job has no next fire, or the fire was already decided'),
      },
    },
  },
} as const;
