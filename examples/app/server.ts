/**
 * Runs the example app: `CRON_SECRET=... node --import tsx examples/app/server.ts`.
 * Env: `PORT` (default 8080), `HOST` (default 127.0.0.1), `PUBLIC_URL`
 * (default `http://<HOST>:<PORT>`), `CRON_SECRET` (required).
 */
import { serve } from '@hono/node-server';
import { buildExampleApp } from './app.js';

const secret = process.env['CRON_SECRET'];
if (secret === undefined || secret === '') {
  console.error('example-app: CRON_SECRET is not set; export the secret the scheduler signs with');
  process.exit(3);
}
const port = Number(process.env['PORT'] ?? '8080');
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`example-app: PORT must be an integer 0..65535, got "${process.env['PORT']}"`);
  process.exit(2);
}
const hostname = process.env['HOST'] ?? '127.0.0.1';
const baseUrl = process.env['PUBLIC_URL'] ?? `http://${hostname}:${port}`;

const app = buildExampleApp({ secret, baseUrl });
const server = serve({ fetch: app.fetch, port, hostname }, (info) => {
  console.log(JSON.stringify({ event: 'listening', url: `http://${hostname}:${info.port}` }));
});

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    server.close(() => process.exit(0));
  });
}
