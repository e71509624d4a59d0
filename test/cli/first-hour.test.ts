/**
 * The first hour with cronix (issue 16): usage errors exit 2, a refused plan promises no spec
 * file, `serve --log-format`, a data dir that cannot be written is named with the fix,
 * `jobs[].description`, the dependency lists, the README's links, and a suite that needs
 * nothing outside the repository. CLI cases run the built binary (`npm run build` first).
 */
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifest } from '../../src/contract/manifest/index.js';
import { dataDirProblem } from '../../src/daemon/boot.js';
import { logFormatOf, prettyLine } from '../../src/io/pretty-log.js';
import { cronix, REPO_ROOT } from '../helpers/cli.js';
import { cronSkipReason } from '../reconcile/cron-skip.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'cronix-first-hour-'));

describe('usage errors exit 2', () => {
  it('runs --outcome bogus and --limit 0 are usage errors naming the flag (no daemon needed)', () => {
    const outcome = cronix(['runs', '--outcome', 'bogus', '--url', 'http://127.0.0.1:9']);
    expect(outcome.status).toBe(2);
    expect(outcome.stderr).toMatch(/--outcome must be one of success, .*; found "bogus"/);
    for (const limit of ['0', '1001', 'ten']) {
      const r = cronix(['runs', '--limit', limit, '--url', 'http://127.0.0.1:9']);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/--limit must be a whole number from 1 to 1000/);
    }
  });
});

describe('a refused plan', () => {
  it('does not say a spec file "will be written"', () => {
    const dir = tmp();
    const m = join(dir, 'm.json');
    writeFileSync(
      m,
      JSON.stringify({
        version: 1,
        app: 'billing',
        jobs: [
          {
            name: 'settle',
            schedule: '* * * * *',
            request: { url: 'https://billing.internal/settle' },
            policy: { concurrency: 'Enqueue' },
            auth: { secret_refs: ['file:/etc/cronix/secret'] },
          },
        ],
      }),
    );
    const r = cronix([
      'plan',
      m,
      '--crontab-path',
      join(dir, 'crontab'),
      '--spec-dir',
      join(dir, 'jobs'),
      '--cron-timezone',
      'UTC',
    ]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/refused \(nothing will be written\)/);
    expect(r.stdout).not.toMatch(/will be written$/m);
    expect(r.stdout).not.toMatch(/spec file .*: will be written/);
  });
});

describe('serve --log-format', () => {
  it('pretty by default on a terminal, JSON otherwise; anything else is a usage error', () => {
    expect(logFormatOf(undefined, true)).toBe('pretty');
    expect(logFormatOf(undefined, false)).toBe('json');
    expect(logFormatOf('json', true)).toBe('json');
    expect(logFormatOf('yaml', true)).toEqual({
      error: '--log-format must be "pretty" or "json", found "yaml"',
    });
    const r = cronix(['serve', 'm.json', '--log-format', 'yaml']);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('error: --log-format must be "pretty" or "json", found "yaml"\n');
  });

  it('pretty: time, level and message first, the other fields as key=value', () => {
    const line = JSON.stringify({
      level: 'warn',
      time: '2026-03-08T07:00:00.123Z',
      event: 'run-ended',
      app: 'billing',
      job: 'settle',
      outcome: 'retries_exhausted',
      err: 'HTTP 503',
      msg: 'billing/settle retries_exhausted',
    });
    expect(prettyLine(line)).toBe(
      '07:00:00.123 WARN  billing/settle retries_exhausted  event=run-ended app=billing job=settle outcome=retries_exhausted err="HTTP 503"\n',
    );
    expect(prettyLine('not json\n')).toBe('not json\n');
  });
});

describe('a data dir that cannot be written', () => {
  it('names the directory, the cause and the fix instead of "internal error"', () => {
    const e = dataDirProblem(
      '/srv/ro',
      'taking serve.lock',
      Object.assign(new Error('x'), { code: 'EROFS' }),
    );
    expect(e.message).toBe(
      'data dir /srv/ro is not writable (EROFS: read-only file system) while taking serve.lock; pass --data-dir with a directory this user can write (default ./.cronix), or fix its permissions',
    );
    const dir = tmp();
    writeFileSync(join(dir, 'file'), '');
    const r = cronix([
      'serve',
      join(REPO_ROOT, 'examples/manifest.json'),
      '--data-dir',
      join(dir, 'file', 'data'),
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^error: data dir .*file\/data is not writable \(ENOTDIR\) while creating it; pass --data-dir/,
    );
    expect(r.stderr).not.toMatch(/internal error/);
  });
});

describe('jobs[].description (SPEC §8)', () => {
  const base = {
    version: 1,
    app: 'billing',
    jobs: [{ name: 'settle', schedule: '@hourly', request: { url: 'https://b.internal/x' } }],
  };
  it('is kept, after enabled in the canonical form, only when set', () => {
    const r = parseManifest({
      ...base,
      jobs: [{ ...base.jobs[0], description: 'Settle invoices' }],
    });
    expect(r.ok && canonicalize(r.manifest)).toMatch(
      /"auth":\{"secret_refs":\[\]\},"description":"Settle invoices"\}\]\}$/,
    );
    const plain = parseManifest(base);
    expect(plain.ok && canonicalize(plain.manifest)).not.toMatch(/description/);
  });
  it('over 500 characters or not a string: an error naming the field', () => {
    for (const description of ['x'.repeat(501), 42]) {
      const r = parseManifest({ ...base, jobs: [{ ...base.jobs[0], description }] });
      expect(r.ok).toBe(false);
      expect(!r.ok && r.errors.map((e) => e.path)).toContain('jobs/0/description');
    }
    const ok = parseManifest({
      ...base,
      jobs: [{ ...base.jobs[0], description: 'x'.repeat(500) }],
    });
    expect(ok.ok).toBe(true);
  });
});

describe('the repository stands alone', () => {
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
    optionalDependencies?: Record<string, string>;
  };
  const files = (dir: string): string[] =>
    readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
      .map((f) => join(dir, f))
      // build output of test fixtures (the Next.js app's .next/, installed node_modules/)
      .filter((f) => !/(^|\/)(\.next|node_modules)\//.test(f))
      .filter((f) => statSync(join(REPO_ROOT, f)).isFile())
      .filter((f) => /\.(ts|mjs|cjs|js|sh|json|yml)$/.test(f) || !/\.[a-z]+$/.test(f));

  it("every package src/ imports is declared: the library entry's at run time, what the binary bundles as dev; uuid is gone", () => {
    const importsOf = (fs: string[]): Set<string> => {
      const imported = new Set<string>();
      for (const f of fs) {
        const text = readFileSync(join(REPO_ROOT, f), 'utf8');
        for (const m of text.matchAll(/^(?:import|export)[^'"]*from '([^'.][^']*)'/gm)) {
          const spec = m[1] as string;
          if (spec.startsWith('node:')) continue;
          imported.add(
            spec.startsWith('@')
              ? spec.split('/').slice(0, 2).join('/')
              : (spec.split('/')[0] as string),
          );
        }
      }
      return imported;
    };
    // src/http/ui/app/ is bundled into a static asset at build time (preact, uplot): dev only
    const ts = files('src').filter((f) => f.endsWith('.ts') && !f.includes('/ui/app/'));
    const declared = { ...pkg.dependencies, ...pkg.devDependencies, ...pkg.optionalDependencies };
    for (const name of importsOf(ts)) expect(declared, name).toHaveProperty([name]);
    // the package's main entry (dist/index.js, tsc output, not bundled) is the contract: what it
    // imports must be installed with cronix
    for (const name of importsOf(ts.filter((f) => f.startsWith('src/contract/'))))
      expect(pkg.dependencies, name).toHaveProperty([name]);
    expect(pkg.devDependencies).toHaveProperty(['kubernetes-models']);
    expect(pkg.dependencies).not.toHaveProperty(['kubernetes-models']);
    expect({ ...pkg.dependencies, ...pkg.devDependencies }).not.toHaveProperty(['uuid']);
  });

  it('nothing in tests, scripts, CI or bench reads outside the repository; the vectors carry their license', () => {
    for (const f of [...files('test'), ...files('scripts'), ...files('.ci'), ...files('bench')]) {
      if (f.endsWith('first-hour.test.ts')) continue;
      const text = readFileSync(join(REPO_ROOT, f), 'utf8');
      expect(text, f).not.toMatch(/\.\.\/shared|\/work\/shared/);
    }
    expect(readFileSync(join(REPO_ROOT, 'test/conformance/README.md'), 'utf8')).toMatch(
      /License: Apache-2\.0/,
    );
  });

  it('the README links every doc', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const docs = [
      ...readdirSync(join(REPO_ROOT, 'docs'))
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`),
      ...readdirSync(join(REPO_ROOT, 'docs/backends')).map((f) => `docs/backends/${f}`),
      'docs/notifications.md', // written in parallel (issue 12); linked already
    ];
    for (const doc of docs) expect(readme, doc).toContain(`](${doc})`);
  });
});

describe('the real-cron end-to-end test never skips silently', () => {
  it('names why it cannot run (shown in the skipped test name and a warning line)', () => {
    expect(cronSkipReason(undefined, true)).toBe(
      'Debian cron is not installed (apt-get install cron)',
    );
    expect(cronSkipReason('/usr/sbin/cron', false)).toMatch(/^not running as root/);
    expect(cronSkipReason(undefined, false)).toMatch(/not installed .* and not running as root/);
    expect(cronSkipReason('/usr/sbin/cron', true)).toBeNull();
    const source = readFileSync(join(REPO_ROOT, 'test/reconcile/cron-e2e.test.ts'), 'utf8');
    expect(source).toMatch(
      /console\.warn\(`real cron end-to-end test SKIPPED: \$\{skipReason\}`\)/,
    );
  });
});
