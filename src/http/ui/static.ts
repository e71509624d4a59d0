/**
 * Serves the web UI (SPEC §13): the bundle `scripts/build-ui.mjs` writes to
 * `dist/ui` (index.html and hashed assets), read into memory once. The pages'
 * paths (`/`, `/jobs`, `/jobs/<app>/<job>`, `/runs/<id>`, `/notifications`, `/dead-letters`, `/login`) answer
 * index.html; the app routes in the browser. Nothing is loaded from another
 * origin: the Content-Security-Policy allows only this one.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Hono } from 'hono';
import { echo } from '../../contract/echo.js';
import { errorJson } from '../serialize.js';

/** Security headers of every UI response. */
export const UI_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; " +
    "form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  map: 'application/json',
};

/** The package's `dist/ui`, found from this module's location (source, tsc output or bundle). */
export function defaultUiDir(): string | null {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) {
      try {
        if ((JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'cronix')
          return join(dir, 'dist', 'ui');
      } catch {
        // not ours; keep looking
      }
    }
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return null;
}

interface Bundle {
  index: string;
  assets: Map<string, { body: Buffer; type: string }>;
}

function loadBundle(dir: string | null): Bundle | null {
  if (dir === null || !existsSync(join(dir, 'index.html'))) return null;
  const assets = new Map<string, { body: Buffer; type: string }>();
  const assetDir = join(dir, 'assets');
  for (const name of existsSync(assetDir) ? readdirSync(assetDir) : []) {
    const ext = name.slice(name.lastIndexOf('.') + 1);
    assets.set(name, {
      body: readFileSync(join(assetDir, name)),
      type: TYPES[ext] ?? 'application/octet-stream',
    });
  }
  return { index: readFileSync(join(dir, 'index.html'), 'utf8'), assets };
}

/** The pages the app routes in the browser. */
export const UI_ROUTES = [
  '/',
  '/login',
  '/jobs',
  '/jobs/:app/:job',
  '/runs/:id',
  '/notifications',
  '/dead-letters',
  '/services',
  '/audit',
] as const;

/** Mounts the UI on the app; `dir` defaults to the package's `dist/ui`. */
export function mountUi(app: Hono, dir: string | null = defaultUiDir()): void {
  const bundle = loadBundle(dir);
  const page = (c: Context): Response => {
    if (!bundle)
      return c.json(
        errorJson(
          'unavailable',
          `the web UI is not built into this installation (no ${dir ?? 'dist/ui'}/index.html): run npm run build`,
        ),
        503,
      );
    return c.html(bundle.index, 200, { ...UI_HEADERS, 'cache-control': 'no-cache' });
  };
  for (const route of UI_ROUTES) app.get(route, page);
  app.get('/assets/:file', (c) => {
    const asset = bundle?.assets.get(c.req.param('file'));
    if (!asset) return c.json(errorJson('not_found', `no asset ${echo(c.req.param('file'))}`), 404);
    return c.body(new Uint8Array(asset.body), 200, {
      ...UI_HEADERS,
      'content-type': asset.type,
      'cache-control': 'public, max-age=31536000, immutable',
    });
  });
}
