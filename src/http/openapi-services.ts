/** The services' paths of the OpenAPI document (SPEC §17, `services.ts`). */
import { error, json, pathParam, time } from './openapi-parts.js';

const Instance = {
  type: 'object',
  properties: {
    instance: { type: 'integer' },
    state: { enum: ['starting', 'running', 'ready', 'backoff', 'stopping', 'stopped'] },
    pid: { type: ['integer', 'null'] },
    run_id: {
      type: ['string', 'null'],
      description: 'the ledger row of the current (or last) start; its log is the live output',
    },
    started_at: time,
    uptime_seconds: { type: ['integer', 'null'] },
    restarts: { type: 'integer' },
    ready: { type: ['boolean', 'null'], description: 'null: the service has no readiness check' },
    crash_loop: { type: 'boolean' },
    next_start_at: { ...time, description: 'while in backoff' },
    last_exit: {
      type: ['object', 'null'],
      properties: { at: time, outcome: { type: 'string' }, error: { type: ['string', 'null'] } },
    },
  },
};

const Service = {
  type: 'object',
  properties: {
    app: { type: 'string' },
    service: { type: 'string' },
    argv: { type: 'array', items: { type: 'string' } },
    instances: { type: 'integer' },
    crash_loop: { type: 'boolean' },
    ready_check: { type: ['string', 'null'] },
    instance_states: { type: 'array', items: Instance },
  },
};

const action = (verb: string, what: string) => ({
  post: {
    summary: `${what} (SPEC §17); all instances, or the one of {"instance": i}`,
    parameters: [pathParam('app', 'app'), pathParam('service', 'service name')],
    requestBody: {
      required: false,
      ...json({ type: 'object', properties: { instance: { type: 'integer', minimum: 0 } } }),
    },
    responses: {
      200: json({
        type: 'object',
        properties: {
          app: { type: 'string' },
          service: { type: 'string' },
          action: { const: verb },
          results: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                instance: { type: 'integer' },
                result: { enum: ['started', 'skipped', 'stopped', 'restarted'] },
                run_id: {
                  type: ['string', 'null'],
                  description: 'the skipped row of a start of a running instance',
                },
              },
            },
          },
        },
      }),
      400: error('invalid body'),
      404: error('no such service or instance'),
      409: error('in doubt (a standby lost the leader while forwarding)'),
      503: error('no leader to carry it out'),
    },
  },
});

/** The paths. */
export const SERVICE_PATHS = {
  '/api/v1/services': {
    get: {
      summary: 'Supervised services and their instances (SPEC §17)',
      responses: {
        200: json({ type: 'object', properties: { services: { type: 'array', items: Service } } }),
      },
    },
  },
  '/api/v1/services/{app}/{service}': {
    get: {
      summary: 'One service and its instances',
      parameters: [pathParam('app', 'app'), pathParam('service', 'service name')],
      responses: { 200: json(Service), 404: error('no such service') },
    },
  },
  '/api/v1/services/{app}/{service}/start': action(
    'start',
    'Starts stopped instances (or ends a backoff); a running one is skipped',
  ),
  '/api/v1/services/{app}/{service}/stop': action(
    'stop',
    'Stops instances (SIGTERM, SIGKILL after graceful_stop_seconds) until a start',
  ),
  '/api/v1/services/{app}/{service}/restart': action(
    'restart',
    'Restarts instances one at a time, each up before the next',
  ),
};
