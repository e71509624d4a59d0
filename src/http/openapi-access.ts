/**
 * The OpenAPI paths and schemas of access (SPEC §18), part of `/openapi.json`: named tokens
 * (admin), the audit log (every role) and the single sign-on routes of the web UI.
 */
import { ROLES } from '../daemon/store/access-types.js';
import { error, json, pathParam, query, ref, time } from './openapi-parts.js';

/** Schemas, merged into the document's `components.schemas`. */
export const ACCESS_SCHEMAS = {
  Token: {
    type: 'object',
    description:
      'A named token. Never its value (shown once, at creation) nor its hash. `kind: file` is the token of the token file (`default`).',
    properties: {
      name: { type: 'string' },
      kind: { enum: ['stored', 'file'] },
      role: { enum: [...ROLES] },
      apps: {
        type: 'array',
        items: { type: 'string' },
        description: 'The apps it may change; empty: every app',
      },
      created_at: time,
      created_by: { type: ['string', 'null'] },
      expires_at: time,
      revoked_at: time,
      state: { enum: ['active', 'expired', 'revoked'] },
    },
  },
  AuditEntry: {
    type: 'object',
    description:
      'One recorded mutation (or login): who did what, to what, from where, how it ended.',
    properties: {
      seq: { type: 'integer', description: 'Position; `before` pages with it' },
      at: time,
      who: { type: 'string', description: 'A token name, an SSO user, or `anonymous` (--no-auth)' },
      who_kind: { enum: ['token', 'user', 'anonymous'] },
      role: { enum: [...ROLES, null] },
      action: {
        type: 'string',
        description:
          'trigger, pause, resume, cancel, replay, token.create, token.revoke, login, logout…',
      },
      app: { type: ['string', 'null'] },
      job: { type: ['string', 'null'] },
      run: { type: ['string', 'null'] },
      from: {
        enum: ['api', 'cli', 'ui'],
        description:
          '`ui`: a web UI session; `cli`: the cronix CLI (X-Cronix-Client: cli); `api` otherwise',
      },
      address: { type: ['string', 'null'] },
      replica: {
        type: ['string', 'null'],
        description: 'The replica that took the request (high availability)',
      },
      forwarded: {
        type: 'boolean',
        description: 'The replica was a standby and handed the verb to the leader',
      },
      result: { enum: ['ok', 'refused', 'failed'] },
      status: { type: 'integer', description: 'The HTTP status answered' },
      detail: { type: ['string', 'null'] },
    },
  },
} as const;

/** Paths, merged into the document's `paths`. */
export const ACCESS_PATHS = {
  '/api/v1/tokens': {
    get: {
      summary: 'Every token, revoked ones included (never a value)',
      responses: {
        200: json({
          type: 'object',
          properties: { tokens: { type: 'array', items: ref('Token') } },
        }),
      },
    },
    post: {
      summary: 'Create a named token; its value is in this answer and never again',
      requestBody: {
        required: true,
        ...json({
          type: 'object',
          required: ['name', 'role'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$' },
            role: { enum: [...ROLES] },
            apps: { type: 'array', items: { type: 'string' }, description: 'not for admin' },
            expires_at: { type: 'string', format: 'date-time' },
          },
        }),
      },
      responses: {
        201: json({
          allOf: [
            ref('Token'),
            {
              type: 'object',
              properties: { token: { type: 'string', description: 'The value: keep it now' } },
            },
          ],
        }),
        400: error('invalid field (named in `path`)'),
        409: error('a live token has that name'),
      },
    },
  },
  '/api/v1/tokens/{name}': {
    delete: {
      summary: 'Revoke a token: refused at once here, within 1 s on other replicas, for good',
      parameters: [pathParam('name', 'token name')],
      responses: {
        200: json({
          type: 'object',
          properties: { name: { type: 'string' }, revoked_at: time },
        }),
        404: error('no live token of that name'),
      },
    },
  },
  '/api/v1/audit': {
    get: {
      summary: 'The audit log, newest first (kept as long as runs)',
      parameters: [
        query('who', 'token name or SSO user'),
        query('action', 'e.g. trigger'),
        query('app', 'only this app'),
        query('job', 'only this job'),
        query('since', 'RFC 3339: rows at or after it'),
        query('limit', '1..1000, default 100'),
        query('before', 'seq of the last row of the previous page'),
      ],
      responses: {
        200: json({
          type: 'object',
          properties: { audit: { type: 'array', items: ref('AuditEntry') } },
        }),
        400: error('invalid filter'),
      },
    },
  },
} as const;
