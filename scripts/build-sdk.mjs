// Builds the `@cronix/sdk` package (packages/sdk) from src/sdk and the part of src/contract it
// uses: one esbuild bundle (no dependencies left to install: the contract's own are bundled in,
// the database drivers are the app's and never imported) plus tsc's declaration files. The code
// stays in src/ because the daemon, the shim and `cronix/sdk` share it.
//
// The declarations must be self-contained: an app with `skipLibCheck: false` and only
// @cronix/sdk installed loads every file the entry's imports reach, so those name nothing but
// relative files and `node:*` (the public types are plain interfaces, not TypeBox's `Static`).
// tsc emits a file for every module the code imports (the whole manifest contract, TypeBox's
// schemas included); the ones the entry's declarations do not reach are dropped, as tsc's own
// module resolution finds them.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const out = 'packages/sdk/dist';
rmSync(out, { recursive: true, force: true });
const result = await build({
  entryPoints: { index: 'src/sdk/index.ts' },
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
});
// kept for the test that proves the bundle imports nothing but Node's built-ins
writeFileSync(`${out}/meta.json`, JSON.stringify(result.metafile));
execFileSync(
  process.execPath,
  ['node_modules/typescript/bin/tsc', '-p', 'packages/sdk/tsconfig.build.json'],
  { stdio: 'inherit' },
);

const typesDir = resolve(out, 'types');
const reached = new Set(
  ts
    .createProgram([join(typesDir, 'sdk/index.d.ts')], {
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      types: [],
      noEmit: true,
    })
    .getSourceFiles()
    .map((f) => resolve(f.fileName)),
);
const emitted = readdirSync(typesDir, { recursive: true, withFileTypes: true }).map((e) => ({
  path: join(e.parentPath, e.name),
  dir: e.isDirectory(),
}));
for (const { path } of emitted.filter((e) => !e.dir && !reached.has(e.path))) rmSync(path);
// deepest first, so a directory left with only empty directories goes too
for (const { path } of emitted.filter((e) => e.dir).sort((a, b) => b.path.length - a.path.length))
  if (readdirSync(path).length === 0) rmSync(path, { recursive: true });
