/**
 * The published packages, as `npm pack` makes them (issue 29): `@cronix/sdk` installs into an
 * empty project with `--ignore-scripts`, no compiler on PATH and no registry (it has no
 * dependencies), holds no native code, verifies a request signed by an independent HMAC, and
 * its declarations stand alone (an app using every export compiles with `skipLibCheck: false`
 * and only `@types/node` besides, the tarball's `.d.ts` import nothing but each other and Node);
 * `cronix`'s tarball carries the binary, the library and `cronix/sdk`, and not the benchmark's
 * peers. Needs the build (`npm run build`).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/common.js';

const SDK_DIR = join(REPO_ROOT, 'packages/sdk');
// Each test's 240-s bound is a bound, not a timing: `npm pack` alone is ~5 s of CPU, and the
// slow project runs this file beside the duplicate stress (two busy cores for ~4 minutes),
// where CI saw the dry run take 70 s.
/** npm's own script, run by this node: no shell and no PATH lookup needed. */
const NPM_CLI = join(dirname(process.execPath), '../lib/node_modules/npm/bin/npm-cli.js');
const TSC = join(REPO_ROOT, 'node_modules/typescript/bin/tsc');
const FIXTURES = join(REPO_ROOT, 'test/packages/fixtures/sdk-types');

function npm(args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync(process.execPath, [NPM_CLI, ...args], {
    cwd,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

/** The packed `@cronix/sdk`, installed into an empty project with no scripts and no registry. */
interface InstalledSdk {
  /** Files the tarball ships. */
  shipped: string[];
  /** The project's directory. */
  app: string;
  /** Its environment: PATH holds only node, npm is offline with an unreachable registry. */
  env: NodeJS.ProcessEnv;
}

function packAndInstall(tag: string): InstalledSdk {
  expect(existsSync(join(SDK_DIR, 'dist/index.js')), 'run npm run build first').toBe(true);
  const work = tempDir(tag);
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', work], SDK_DIR)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const tarball = join(work, packed[0]!.filename);
  // an empty project; PATH holds only node (no cc, g++, make, python)
  const app = join(work, 'app');
  const bin = join(work, 'bin');
  mkdirSync(app);
  mkdirSync(bin);
  symlinkSync(process.execPath, join(bin, 'node'));
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module' }),
  );
  const env = {
    PATH: bin,
    HOME: work,
    npm_config_cache: join(work, 'cache'),
    npm_config_offline: 'true',
    npm_config_registry: 'http://127.0.0.1:9/',
  };
  npm(['install', '--ignore-scripts', '--no-audit', '--no-fund', tarball], app, env);
  return { shipped: packed[0]!.files.map((f) => f.path), app, env };
}

/** Runs the repository's TypeScript compiler on a project; its diagnostics and exit status. */
function tsc(
  project: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): { status: number | null; out: string } {
  const run = spawnSync(process.execPath, [TSC, '-p', project, '--pretty', 'false'], {
    cwd,
    env,
    encoding: 'utf8',
  });
  return { status: run.status, out: run.stdout + run.stderr };
}

/** Links a package of the repository's node_modules into the project (npm cannot: offline). */
function linkFromRepo(app: string, name: string): void {
  mkdirSync(dirname(join(app, 'node_modules', name)), { recursive: true });
  symlinkSync(join(REPO_ROOT, 'node_modules', name), join(app, 'node_modules', name));
}

describe('@cronix/sdk tarball', () => {
  it('installs with no compiler, no scripts and no registry, and verifies a signed request', () => {
    const { shipped, app, env } = packAndInstall('sdk-pack');
    expect(shipped).toContain('dist/index.js');
    expect(shipped).toContain('dist/types/sdk/index.d.ts');
    expect(shipped.filter((p) => p.endsWith('.node'))).toEqual([]);
    expect(
      spawnSync('/bin/sh', ['-c', 'command -v cc g++ make python3'], { env }).stdout.length,
    ).toBe(0);

    const installed = readdirSync(join(app, 'node_modules'), { recursive: true })
      .map(String)
      .filter((p) => p.endsWith('package.json') && !p.includes('/dist/'));
    expect(installed.sort()).toEqual(['@cronix/sdk/package.json']);
    expect(filesUnder(join(app, 'node_modules')).filter((p) => p.endsWith('.node'))).toEqual([]);

    // the signature computed by hand from SPEC §4, not by cronix's signer
    writeFileSync(
      join(app, 'check.mjs'),
      `import { createHmac } from 'node:crypto';
import { verifyRequest, triggerInfo, runOnce, cronixExpress, cronixFastify, cronixHono, withCronix } from '@cronix/sdk';
const secret = 'pack-test-secret-0123456789';
const t = Math.floor(Date.now() / 1000);
const body = '{"invoice":42}';
const mac = createHmac('sha256', secret).update(\`\${t}.POST./jobs/bill?x=1.\${body}\`).digest('hex');
const headers = { 'X-Cron-Signature': \`t=\${t},v1=\${mac}\`, 'X-Cron-Run-Key': 'billing/bill#2026-01-01T00:00:00Z#ab' };
const good = await verifyRequest(new Request('http://app.local/jobs/bill?x=1', { method: 'POST', headers, body }), { secrets: [secret] });
const bad = await verifyRequest(new Request('http://app.local/jobs/bill?x=1', { method: 'POST', headers, body: body + ' ' }), { secrets: [secret] });
const info = triggerInfo(new Request('http://app.local/', { headers }));
console.log(JSON.stringify({ good: good.ok, bad: bad.ok ? 'ok' : bad.code, runKey: info.runKey,
  fns: [runOnce, cronixExpress, cronixFastify, cronixHono, withCronix].map((f) => typeof f) }));
`,
    );
    const out = execFileSync(process.execPath, ['check.mjs'], { cwd: app, env, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({
      good: true,
      bad: 'SignatureMismatch',
      runKey: 'billing/bill#2026-01-01T00:00:00Z#ab',
      fns: ['function', 'function', 'function', 'function', 'function'],
    });
  }, 240_000);

  it('type-checks an app using every export, strict and with skipLibCheck false, with only @types/node besides', () => {
    const { shipped, app, env } = packAndInstall('sdk-types');
    // the declarations name nothing but their own files and Node's modules
    const declarations = shipped.filter((p) => p.endsWith('.d.ts'));
    const named = declarations.flatMap((p) =>
      ts
        .preProcessFile(readFileSync(join(app, 'node_modules/@cronix/sdk', p), 'utf8'))
        .importedFiles.map((f) => `${p}: ${f.fileName}`),
    );
    expect(named.length).toBeGreaterThan(0);
    expect([...new Set(named.filter((n) => !/: (\.{1,2}\/|node:)/.test(n)))]).toEqual([]);

    // the app imports every export of the package (TypeScript's own list of them) and, with
    // noUnusedLocals, uses each
    const entry = join(app, 'node_modules/@cronix/sdk/dist/types/sdk/index.d.ts');
    const program = ts.createProgram([entry], {
      noEmit: true,
      types: [],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
    });
    const checker = program.getTypeChecker();
    const exported = checker
      .getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)!)!)
      .map((s) => s.name);
    expect(exported.length).toBeGreaterThan(50);
    const fixture = ts.createSourceFile(
      'app.ts',
      readFileSync(join(FIXTURES, 'app.ts'), 'utf8'),
      ts.ScriptTarget.ES2022,
    );
    const imported = fixture.statements.flatMap((s) =>
      ts.isImportDeclaration(s) &&
      ts.isStringLiteral(s.moduleSpecifier) &&
      s.moduleSpecifier.text === '@cronix/sdk' &&
      s.importClause?.namedBindings &&
      ts.isNamedImports(s.importClause.namedBindings)
        ? s.importClause.namedBindings.elements.map((e) => e.name.text)
        : [],
    );
    expect(imported.sort()).toEqual(exported.sort());

    const compilerOptions = {
      strict: true,
      skipLibCheck: false,
      noUnusedLocals: true,
      noEmit: true,
      target: 'ES2022',
      lib: ['ES2022'], // no DOM: Request and Response come from @types/node, as on a server
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      types: ['node'],
    };
    copyFileSync(join(FIXTURES, 'app.ts'), join(app, 'app.ts'));
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions, files: ['app.ts'] }),
    );
    linkFromRepo(app, '@types/node');
    expect(readdirSync(join(app, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual([
      '@cronix',
      '@types',
    ]);
    expect(readdirSync(join(app, 'node_modules/@types'))).toEqual(['node']);
    expect(tsc('tsconfig.json', app, env)).toEqual({ status: 0, out: '' });

    // the optional peers' types, for an app that uses them: the real handles fit runOnce
    copyFileSync(join(FIXTURES, 'drivers.ts'), join(app, 'drivers.ts'));
    writeFileSync(
      join(app, 'tsconfig.drivers.json'),
      JSON.stringify({ compilerOptions, files: ['drivers.ts'] }),
    );
    linkFromRepo(app, '@types/pg');
    linkFromRepo(app, '@types/better-sqlite3');
    expect(tsc('tsconfig.drivers.json', app, env)).toEqual({ status: 0, out: '' });
  }, 240_000);

  it('bundles nothing but Node built-ins as imports', () => {
    const meta = JSON.parse(readFileSync(join(SDK_DIR, 'dist/meta.json'), 'utf8')) as {
      outputs: Record<string, { imports: { path: string; external?: boolean }[] }>;
    };
    const external = Object.values(meta.outputs)
      .flatMap((o) => o.imports)
      .filter((i) => i.external)
      .map((i) => i.path);
    expect(external.length).toBeGreaterThan(0);
    expect(external.filter((p) => !p.startsWith('node:'))).toEqual([]);
    const sdk = JSON.parse(readFileSync(join(SDK_DIR, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(sdk['dependencies']).toBeUndefined();
  });
});

describe('cronix tarball', () => {
  it('carries the binary, the library and cronix/sdk, and no benchmark peers', () => {
    const packed = JSON.parse(npm(['pack', '--dry-run', '--json'], REPO_ROOT)) as {
      files: { path: string }[];
    }[];
    const files = packed[0]!.files.map((f) => f.path);
    for (const f of [
      'dist/bin/cronix.mjs',
      'dist/index.js',
      'dist/sdk/index.js',
      'schema/manifest.schema.json',
    ])
      expect(files).toContain(f);
    expect(
      files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('bench/')),
    ).toEqual([]);
    const root = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      overrides?: unknown;
    };
    // what the binary bundles is a devDependency: the installed dependencies are the packages
    // the bundle leaves external (native add-ons, pino) and what the library entries import
    const meta = JSON.parse(readFileSync(join(REPO_ROOT, 'dist/bin/meta.json'), 'utf8')) as {
      outputs: Record<string, { imports: { path: string; external?: boolean }[] }>;
    };
    const external = new Set(
      Object.values(meta.outputs).flatMap((o) =>
        o.imports.filter((i) => i.external).map((i) => i.path),
      ),
    );
    for (const dep of Object.keys(root.dependencies))
      expect(external.has(dep) || dep === '@sinclair/typebox', dep).toBe(true);
    for (const native of ['better-sqlite3', 'fs-ext', 'pino'])
      expect(root.dependencies[native], native).toBeDefined();
    const all = { ...root.dependencies, ...root.devDependencies };
    for (const peer of ['bullmq', 'croner', 'node-cron', 'tinybench'])
      expect(all[peer], peer).toBeUndefined();
    // undici is the daemon's HTTP client (not only the bench's): bundled, never installed
    expect(root.devDependencies['undici']).toBeDefined();
    expect(external.has('undici')).toBe(false);
    expect(root.overrides).toBeUndefined();
  }, 240_000);
});
