// Bundles the `cronix` binary with esbuild: one entry plus lazily loaded
// chunks, so `cronix trigger` (run once per fire) parses only the shim's code
// instead of resolving hundreds of module files. The library build (dist/ with
// .d.ts files) stays plain tsc output.
import { build } from 'esbuild';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { asciiChunks } from './ascii-bundle.mjs';

rmSync('dist/bin', { recursive: true, force: true });
const result = await build({
  entryPoints: { cronix: 'src/cli/main.ts' },
  outdir: 'dist/bin',
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // native addons (and pino, whose worker files cannot be bundled): loaded from node_modules
  external: ['fs-ext', 'better-sqlite3', 'pino', 'unix-dgram'],
  banner: {
    js: "import { createRequire as __cronixCreateRequire } from 'node:module'; const require = __cronixCreateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
});
// comments keep their non-ASCII characters, and one makes V8 hold a chunk's source as two bytes
// per character (scripts/ascii-bundle.mjs)
asciiChunks('dist/bin');
// kept for the test that proves `cronix trigger` loads only the shim's code
writeFileSync('dist/bin/meta.json', JSON.stringify(result.metafile));
chmodSync('dist/bin/cronix.mjs', 0o755);
