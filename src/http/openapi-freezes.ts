/** The freeze routes' part of the OpenAPI document (SPEC §16 "Freeze"), see `freezes.ts`. */
import { error, json, ref, time } from './openapi-parts.js';

const scopeProps = {
  app: { type: ['string', 'null'], description: 'absent or null: every app' },
  job: { type: ['string', 'null'], description: "absent or null: every job of the scope's app(s)" },
} as const;

/** Schemas of the freeze routes. */
export const FREEZE_SCHEMAS = {
  Freeze: {
    type: 'object',
    description:
      'A freeze (SPEC §16): while it lasts nothing new is admitted for its scope (scheduled, catch-up, manual, delayed, queued, replay, backfill); runs in flight finish. Manual triggers and replays are recorded `skipped` with `error` `frozen: <reason> (by <who>)`; scheduled fires are caught up when it ends (`policy.catchup`: the runs it picks run as `catchup`, the rest are recorded `missed` with that reason).',
    properties: {
      ...scopeProps,
      reason: { type: 'string' },
      by: { type: 'string', description: '`cli`, `ui` or `api` (the API token)' },
      since: time,
      until: { ...time, description: 'when it ends by itself; null: until unfrozen' },
    },
  },
  PauseNote: {
    type: ['object', 'null'],
    description: "A paused job's note: why, who, since when (null fields: paused without one)",
    properties: {
      reason: { type: ['string', 'null'] },
      by: { type: ['string', 'null'] },
      since: time,
    },
  },
} as const;

/** Paths of the freeze routes. */
export const FREEZE_PATHS = {
  '/api/v1/freezes': {
    get: {
      summary: 'The freezes in force, widest scope first',
      responses: {
        200: json({
          type: 'object',
          properties: { freezes: { type: 'array', items: ref('Freeze') } },
        }),
      },
    },
    post: {
      summary: 'Freeze every job, an app, or a job (replaces the freeze of the same scope)',
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          additionalProperties: false,
          required: ['reason'],
          properties: {
            ...scopeProps,
            reason: { type: 'string', minLength: 1, maxLength: 500 },
            until: { type: 'string', format: 'date-time', description: 'in the future' },
          },
        }),
      },
      responses: {
        201: json({ type: 'object', properties: { freeze: ref('Freeze') } }),
        400: error('invalid body'),
        404: error('no such app or job'),
      },
    },
  },
  '/api/v1/freezes/unfreeze': {
    post: {
      summary: 'End the freeze of exactly this scope; its jobs catch up',
      requestBody: {
        required: false,
        ...json({ type: 'object', additionalProperties: false, properties: scopeProps }),
      },
      responses: {
        200: json({
          type: 'object',
          properties: { unfrozen: ref('Freeze'), by: { type: 'string' } },
        }),
        400: error('invalid body'),
        404: error('that scope is not frozen'),
      },
    },
  },
} as const;
