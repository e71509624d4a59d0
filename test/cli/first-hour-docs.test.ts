/**
 * The first hour, read as a new user reads it (issue "The first hour", items 22, 23, 24, 26):
 * the docs stand alone (no "SPEC §", no SPEC.md), the README says what a terminal shows, where
 * the port is and that host mode needs a running cron, daemon.md has one API table and no
 * benchmark internals, and the README's one test command sets up what the suite needs
 * (`scripts/test-all.sh`, also what CI runs).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';

const read = (path: string): string => readFileSync(join(REPO_ROOT, path), 'utf8');
const docs = (): string[] =>
  readdirSync(join(REPO_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);

describe('the docs stand alone', () => {
  it('README and docs/ cite no "SPEC §" and link no SPEC.md', () => {
    for (const file of ['README.md', ...docs()]) {
      const text = read(file);
      expect(text, file).not.toMatch(/SPEC\s*§|SPEC\.md|\(§\d/);
    }
  });
});

describe('README: what the first hour shows', () => {
  const readme = read('README.md');

  it('says the daemon prints readable lines on a terminal, names --listen and the port', () => {
    expect(readme).not.toMatch(/one JSON\s+log line per event/);
    expect(readme).toMatch(/On a terminal the daemon\s+prints one readable line per event/);
    expect(readme).toMatch(/--listen 127\.0\.0\.1:7071/);
    expect(readme).toMatch(/`examples\/manifest\.json` names\s+`http:\/\/127\.0\.0\.1:8080`/);
  });

  it('says host mode needs the cron daemon running, also in a container', () => {
    const hostMode = readme.slice(readme.indexOf('**Host-scheduler mode**'));
    expect(hostMode.slice(0, 900)).toMatch(
      /`apt-get install cron` installs it but does not start it/,
    );
  });

  it('shows exactly one test command: npm run test:all, which runs scripts/test-all.sh; CI runs it too', () => {
    const blocks = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    const testBlocks = blocks.filter((b) => /\bnpm (run )?test/.test(b));
    expect(testBlocks).toEqual(['npm run test:all\n']);
    const pkg = JSON.parse(read('package.json')) as { scripts: Record<string, string> };
    expect(pkg.scripts['test:all']).toBe('bash scripts/test-all.sh');
    const ci = read('.ci/run');
    expect(ci).toMatch(/^exec npm run test:all <\/dev\/null$/m);
    expect(ci).not.toMatch(/apt-get|redis-server|pg_ctlcluster|npm ci/);
    const script = read('scripts/test-all.sh');
    expect(script).toContain(
      'redis=(redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no)',
    );
    expect(script).toContain('pg_ctlcluster --skip-systemctl-redirect');
    expect(script).toContain('npm ci --no-audit --no-fund');
    expect(script).toMatch(/exec npm test/);
  });
});

describe('docs/daemon.md: one API table, no benchmark internals', () => {
  const daemon = read('docs/daemon.md');
  it('lists GET /jobs once and points at the OpenAPI document', () => {
    expect(daemon.match(/^\| GET +\| `\/jobs` +\|/gm)).toHaveLength(1);
    expect(daemon).toMatch(/`GET \/openapi\.json`, is the reference/);
  });
  it('keeps measurements in BENCHMARKS.md', () => {
    expect(daemon).not.toMatch(/p99|peak RSS|, measured\*\*/);
    expect(read('BENCHMARKS.md')).toMatch(/## Notes behind the daemon's numbers/);
  });
});

describe('scripts/test-all.sh', () => {
  /** Runs the script with CI=true, no stdin and a PATH of only what it is given. */
  const run = (tools: string[]) => {
    const bin = mkdtempSync(join(tmpdir(), 'cronix-test-all-'));
    for (const tool of [
      'node',
      'npm',
      'id',
      'ls',
      'sort',
      'tail',
      'seq',
      'sleep',
      'dirname',
      ...tools,
    ]) {
      const which = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' });
      if (which.status === 0) symlinkSync(which.stdout.trim(), join(bin, tool));
    }
    return spawnSync('/bin/bash', [join(REPO_ROOT, 'scripts/test-all.sh'), '--check'], {
      cwd: tmpdir(),
      env: { PATH: bin, CI: 'true', HOME: tmpdir() },
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      timeout: 60_000,
    });
  };

  it('without apt-get, names the missing packages and the exact command to install them', () => {
    const r = run([]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^error: the tests need these missing packages: redis-server util-linux /m,
    );
    expect(r.stderr).toMatch(
      /^ {2}sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server util-linux .*chromium-headless-shell strace prometheus$/m,
    );
  });

  it.runIf(process.getuid?.() === 0)(
    'as root with apt-get, --check says it would install them, then run npm test',
    () => {
      const r = run(['apt-get']);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(
        /^== would run: apt-get update && apt-get install -y redis-server /m,
      );
      expect(r.stdout).toMatch(/^== would run: npm test$/m);
    },
  );
});
