/**
 * The example app: two jobs declared in code, their manifest served at
 * `/.well-known/cron-manifest`, and job endpoints that accept only correctly
 * signed trigger requests. `server.ts` runs it on a real port.
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import {
  MANIFEST_PATH,
  defineApp,
  manifestHandler,
  triggerInfo,
  unauthorizedResponse,
  verifyRequest,
  type AppBuilder,
} from '../../src/sdk/index.js';

/** Settings of {@link buildExampleApp}. */
export interface ExampleAppOptions {
  /** Secret value that trigger requests are signed with (from `CRON_SECRET`). */
  secret: string;
  /** Public base URL of this app, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Where to log one JSON line per request; default `console.log`. */
  log?: (line: string) => void;
}

/** Declares the example app's jobs; `baseUrl` becomes the prefix of every job URL. */
export function declareExampleJobs(baseUrl: string): AppBuilder {
  return defineApp('example-app', { baseUrl, secretRefs: ['env:CRON_SECRET'] })
    .job({
      name: 'hello',
      schedule: '* * * * *',
      path: '/jobs/hello',
      policy: { concurrency: 'Forbid', timeout_seconds: 30 },
    })
    .job({
      name: 'nightly-report',
      schedule: '30 2 * * *',
      timezone: 'Europe/Berlin',
      path: '/jobs/nightly-report',
      body: '{"report":"daily"}',
      headers: { 'content-type': 'application/json' },
      policy: { retries: { max_attempts: 5, min_seconds: 2, max_seconds: 120 } },
    });
}

/** Builds the Hono app; throws if the declared jobs are not a valid manifest. */
export function buildExampleApp(opts: ExampleAppOptions): Hono {
  const log = opts.log ?? ((line: string) => console.log(line));
  const secrets = [opts.secret];
  const serveManifest = manifestHandler(declareExampleJobs(opts.baseUrl), { secrets });
  const app = new Hono();

  app.on(['GET', 'HEAD'], MANIFEST_PATH, (c) => serveManifest(c.req.raw));

  const job = (name: string, work: (body: string) => Record<string, unknown>) => {
    return async (c: Context) => {
      const result = await verifyRequest(c.req.raw, { secrets });
      const info = triggerInfo(c.req.raw);
      if (!result.ok) {
        log(
          JSON.stringify({ event: 'rejected', job: name, code: result.code, run_id: info.runId }),
        );
        return unauthorizedResponse(result);
      }
      // The body is still readable: verifyRequest read a clone.
      const body = await c.req.text();
      log(
        JSON.stringify({
          event: 'run',
          job: name,
          run_id: info.runId,
          attempt: info.attempt,
          run_key: info.runKey,
        }),
      );
      return c.json({
        ok: true,
        job: name,
        run_id: info.runId,
        attempt: info.attempt,
        ...work(body),
      });
    };
  };

  app.post(
    '/jobs/hello',
    job('hello', () => ({ message: 'hello from example-app' })),
  );
  app.post(
    '/jobs/nightly-report',
    job('nightly-report', (body) => ({ received_bytes: new TextEncoder().encode(body).length })),
  );
  return app;
}
