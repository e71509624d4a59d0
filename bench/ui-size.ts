/**
 * The web UI's bundle size (SPEC §13: JS + CSS ≤ 100 KB gzipped), read from
 * dist/ui/manifest.json, which `scripts/build-ui.mjs` writes (and which fails
 * the build over budget). `npm run bench` builds first.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface UiManifest {
  sizes: Record<string, { bytes: number; gzip: number }>;
  gzip_total: number;
}

const kb = (n: number): string => (n / 1024).toFixed(1);

/** Markdown lines of the section. */
export function uiBundleSection(): string[] {
  const path = fileURLToPath(new URL('../dist/ui/manifest.json', import.meta.url));
  const m = JSON.parse(readFileSync(path, 'utf8')) as UiManifest;
  const budget = 100 * 1024;
  return [
    '## Web UI bundle (JS + CSS, lower is better)',
    '',
    'Preact, uPlot and the app, minified by esbuild; gzip level 9. The build fails over budget.',
    '',
    '| file | bytes | gzipped bytes |',
    '|---|---:|---:|',
    ...Object.entries(m.sizes).map(
      ([file, s]) =>
        `| ${file.replace(/-[A-Z0-9]+\./, '-<hash>.')} | ${s.bytes.toLocaleString('en')} | ${s.gzip.toLocaleString('en')} |`,
    ),
    `| **total** | | **${m.gzip_total.toLocaleString('en')}** (${kb(m.gzip_total)} KB) |`,
    '',
    `Target: ≤ 100 KB gzipped — ${m.gzip_total <= budget ? 'met' : '**not met**'}.`,
  ];
}
