// Bundles the web UI (src/http/ui/app) with esbuild into dist/ui: index.html plus
// content-hashed JS and CSS under dist/ui/assets, which the daemon serves from memory.
// Writes dist/ui/manifest.json with each file's raw and gzipped size and fails the
// build when JS + CSS exceed the budget of SPEC §13 (100 KB gzipped).
import { createHash } from 'node:crypto';
import { build } from 'esbuild';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';

const OUT = 'dist/ui';
const BUDGET_GZIP_BYTES = 100 * 1024;

rmSync(OUT, { recursive: true, force: true });
mkdirSync(join(OUT, 'assets'), { recursive: true });
const result = await build({
  entryPoints: { app: 'src/http/ui/app/main.tsx' },
  outdir: join(OUT, 'assets'),
  entryNames: '[name]-[hash]',
  assetNames: '[name]-[hash]',
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: ['chrome100', 'firefox100', 'safari15'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  loader: { '.svg': 'file' },
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.keys(result.metafile.outputs);
const js = outputs.find((f) => f.endsWith('.js'));
const css = outputs.find((f) => f.endsWith('.css'));
if (!js || !css) throw new Error(`expected one JS and one CSS output, found ${outputs.join(', ')}`);

const icon = readFileSync('src/http/ui/app/icon.svg');
const iconName = `icon-${createHash('sha256').update(icon).digest('hex').slice(0, 8)}.svg`;
writeFileSync(join(OUT, 'assets', iconName), icon);

const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>cronix</title>
<link rel="icon" href="/assets/${iconName}" type="image/svg+xml">
<link rel="stylesheet" href="/assets/${basename(css)}">
<script type="module" src="/assets/${basename(js)}"></script>
</head>
<body>
<div id="app"><p class="boot">Loading cronix…</p></div>
<noscript>The cronix web UI needs JavaScript. The API is at /api/v1 and /openapi.json.</noscript>
</body>
</html>
`;
writeFileSync(join(OUT, 'index.html'), html);

const sizes = {};
let total = 0;
for (const file of [js, css]) {
  const body = readFileSync(file);
  const gzip = gzipSync(body, { level: 9 }).length;
  sizes[basename(file)] = { bytes: body.length, gzip };
  total += gzip;
}
writeFileSync(
  join(OUT, 'manifest.json'),
  JSON.stringify({ js: basename(js), css: basename(css), sizes, gzip_total: total }, null, 2),
);
console.log(
  `web UI: ${Object.entries(sizes)
    .map(
      ([f, s]) => `${f} ${(s.bytes / 1024).toFixed(1)} KB (${(s.gzip / 1024).toFixed(1)} KB gzip)`,
    )
    .join(', ')}; JS + CSS ${(total / 1024).toFixed(1)} KB gzipped`,
);
if (total > BUDGET_GZIP_BYTES) {
  console.error(`web UI over budget: ${total} bytes gzipped > ${BUDGET_GZIP_BYTES}`);
  process.exit(1);
}
