/**
 * The first hour in host mode, tried as a new user would (issue "The first hour", items 7, 13,
 * 16): `plan` lists refused entries apart from the creates with every reason; under `npx` the
 * trigger command is never npx's cache and `plan` shows the command it writes; `prune --yes`
 * leaves no state files and no empty crontab. Runs the built binary (`npm run build` first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cronix, REPO_ROOT, type CliResult } from '../helpers/cli.js';
import { workspace } from '../reconcile/cli-helpers.js';

const job = (name: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name,
  schedule: '*/10 * * * *',
  request: { url: `https://billing.internal/${name}` },
  auth: { secret_refs: ['file:/etc/cronix/secret'] },
  ...extra,
});

describe('plan: refused entries apart, with every reason', () => {
  const manifest = {
    version: 1,
    app: 'billing',
    jobs: [
      job('settle'),
      job('report'),
      job('tick', { schedule: '*/10 * * * * *', policy: { concurrency: 'Enqueue' } }),
      job('sync', { policy: { concurrency: 'Enqueue', jitter: { random_seconds: 30 } } }),
    ],
  };

  it('the table counts refused entries apart and lists each reason on its own line', () => {
    const ws = workspace();
    const r = cronix(['plan', ws.manifest(manifest), ...ws.flags]);
    expect(r.status).toBe(1);
    const out = r.stdout;
    expect(out).toMatch(/^Plan: 2 to create, 0 to update, 0 to delete, 0 unchanged; 2 refused\.$/m);
    expect(out).not.toMatch(/^create\s+cronix-billing-(tick|sync)-0/m);
    const refused = out.slice(out.indexOf('refused (nothing will be written):'));
    expect(refused).toMatch(
      /cronix-billing-tick-0 \(\*\/10 \* \* \* \* \*\):\n {4}- job billing\/tick: schedule "\*\/10 \* \* \* \* \*" has a seconds field.*\n {4}- policy\.concurrency "Enqueue" needs cronix serve/,
    );
    expect(refused).toMatch(
      /cronix-billing-sync-0 \(\*\/10 \* \* \* \*\):\n {4}- policy\.concurrency "Enqueue".*\n {4}- policy\.jitter needs cronix serve/,
    );
  });

  it('-o json: creates and summary leave refused entries out; refusals carry every reason', () => {
    const ws = workspace();
    const r = cronix(['plan', ws.manifest(manifest), ...ws.flags, '-o', 'json']);
    expect(r.status).toBe(1);
    const json = JSON.parse(r.stdout) as {
      creates: { id: string }[];
      refusals: { id: string; schedule: string; reason: string; reasons: string[] }[];
      summary: Record<string, number>;
    };
    expect(json.creates.map((c) => c.id)).toEqual([
      'cronix-billing-report-0',
      'cronix-billing-settle-0',
    ]);
    expect(json.summary).toMatchObject({ create: 2, refused: 2 });
    const sync = json.refusals.find((x) => x.id === 'cronix-billing-sync-0');
    expect(sync?.reasons).toHaveLength(2);
    expect(sync?.reason).toBe(sync?.reasons.join('; '));
  });
});

describe("under npx, the trigger command is an installed cronix, never npx's cache", () => {
  /**
   * A workspace where cronix runs the way `npx cronix` runs it when it is not installed: from
   * `~/.npm/_npx/<hash>/node_modules/cronix`, with a PATH holding node and, if asked, an
   * installed `cronix` (a wrapper script in `<dir>/bin`).
   */
  const npxWorkspace = (installed: boolean) => {
    const ws = workspace();
    const pkg = join(ws.dir, 'home/.npm/_npx/1a2b3c4d/node_modules/cronix');
    mkdirSync(dirname(pkg), { recursive: true });
    symlinkSync(REPO_ROOT, pkg);
    const nodeDir = join(ws.dir, 'node-bin');
    mkdirSync(nodeDir);
    symlinkSync(process.execPath, join(nodeDir, 'node'));
    // npx puts its own .bin first on PATH
    const npxBin = join(ws.dir, 'home/.npm/_npx/1a2b3c4d/node_modules/.bin');
    mkdirSync(npxBin);
    symlinkSync(join(pkg, 'dist/bin/cronix.mjs'), join(npxBin, 'cronix'));
    const binDir = join(ws.dir, 'bin');
    mkdirSync(binDir);
    if (installed) {
      writeFileSync(
        join(binDir, 'cronix'),
        `#!/bin/sh\nexec ${process.execPath} ${join(REPO_ROOT, 'dist/bin/cronix.mjs')} "$@"\n`,
        { mode: 0o755 },
      );
    }
    const run = (args: string[]): CliResult => {
      const r = spawnSync(process.execPath, [join(npxBin, 'cronix'), ...args], {
        cwd: ws.dir,
        env: { PATH: [npxBin, nodeDir, binDir].join(':'), HOME: join(ws.dir, 'home') },
        encoding: 'utf8',
        timeout: 20_000,
      });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    // the workspace's flags without --trigger-bin
    const flags = [
      '--crontab-path',
      ws.crontab,
      '--spec-dir',
      ws.specDir,
      '--cron-timezone',
      'UTC',
    ];
    return { ws, run, flags, binDir, npxBin };
  };
  const manifest = { version: 1, app: 'billing', jobs: [job('settle')] };

  it('no installed cronix: plan and apply refuse (exit 2) naming npx and --trigger-bin; nothing is written', () => {
    const { ws, run, flags } = npxWorkspace(false);
    const m = ws.manifest(manifest);
    for (const command of ['plan', 'apply']) {
      const r = run([command, m, ...flags]);
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/^error: this cronix runs from npx's cache \(.*\/_npx\/1a2b3c4d\//);
      expect(r.stderr).toMatch(/--trigger-bin/);
    }
    expect(() => readFileSync(ws.crontab)).toThrow();
    // reading what is installed needs no trigger command
    expect(run(['list', ...flags]).status).toBe(0);
  });

  it('an installed cronix on PATH is what plan shows and apply writes', () => {
    const { ws, run, flags, binDir } = npxWorkspace(true);
    const m = ws.manifest(manifest);
    const plan = run(['plan', m, ...flags]);
    expect(plan.stderr).toBe('');
    expect(plan.status).toBe(0);
    expect(plan.stdout).toContain(
      `host scheduler runs: ${join(binDir, 'cronix')} trigger <app>.<job> --spec-dir ${ws.specDir}\n`,
    );
    const json = JSON.parse(run(['plan', m, ...flags, '-o', 'json']).stdout) as {
      trigger_command: string;
    };
    expect(json.trigger_command).toBe(
      `${join(binDir, 'cronix')} trigger <app>.<job> --spec-dir ${ws.specDir}`,
    );
    expect(run(['apply', m, ...flags]).status).toBe(0);
    const crontab = readFileSync(ws.crontab, 'utf8');
    expect(crontab).toContain(`${join(binDir, 'cronix')} trigger billing.settle`);
    expect(crontab).not.toContain('_npx');
  });

  it("--trigger-bin into npx's cache is refused; an installed one is taken", () => {
    const { ws, run, flags, npxBin } = npxWorkspace(false);
    const m = ws.manifest(manifest);
    const cached = run(['plan', m, ...flags, '--trigger-bin', join(npxBin, 'cronix')]);
    expect(cached.status).toBe(2);
    expect(cached.stderr).toMatch(/--trigger-bin .* is in npx's cache/);
    const cli = join(REPO_ROOT, 'dist/bin/cronix.mjs');
    const given = run(['plan', m, ...flags, '--trigger-bin', cli]);
    expect(given.status).toBe(0);
    expect(given.stdout).toContain(`host scheduler runs: ${process.execPath} ${cli} trigger`);
  });
});

describe('prune --yes leaves nothing of the app behind', () => {
  const manifest = { version: 1, app: 'billing', jobs: [job('settle'), job('report')] };

  it("removes the app's state dirs (also of jobs apply removed earlier), keeps other apps' and the locks", () => {
    const ws = workspace();
    const stateDir = join(ws.dir, 'state');
    const lockDir = join(ws.dir, 'lock');
    const flags = [...ws.flags, '--state-dir', stateDir, '--lock-dir', lockDir];
    expect(cronix(['apply', ws.manifest(manifest), ...flags]).status).toBe(0);
    // what the shim leaves on this host after some fires
    for (const target of ['billing.settle', 'billing.old-job', 'other.job']) {
      mkdirSync(join(stateDir, target, 'succeeded'), { recursive: true });
      writeFileSync(join(stateDir, target, 'last-success'), '1767225600000');
    }
    mkdirSync(lockDir, { recursive: true });
    writeFileSync(join(lockDir, 'billing.settle.lock'), '');

    const dry = cronix(['prune', '--app', 'billing', ...flags]);
    expect(dry.status).toBe(2);
    expect(dry.stdout).toContain(`  state dir ${join(stateDir, 'billing.settle')}\n`);

    const r = cronix(['prune', '--app', 'billing', '--yes', ...flags, '-o', 'json']);
    expect(r.status).toBe(0);
    const json = JSON.parse(r.stdout) as { state_dirs: string[] };
    expect(json.state_dirs).toEqual([
      join(stateDir, 'billing.old-job'),
      join(stateDir, 'billing.settle'),
    ]);
    expect(existsSync(join(stateDir, 'billing.settle'))).toBe(false);
    expect(existsSync(join(stateDir, 'billing.old-job'))).toBe(false);
    expect(existsSync(join(stateDir, 'other.job', 'last-success'))).toBe(true);
    expect(existsSync(join(lockDir, 'billing.settle.lock'))).toBe(true);
    expect(existsSync(ws.crontab)).toBe(false);
    expect(existsSync(join(ws.specDir, 'billing.settle.json'))).toBe(false);
  });

  it('the user crontab is removed (crontab -r), not left empty', () => {
    const ws = workspace();
    // a crontab(1) that keeps the user crontab in a file, as Debian's does in its spool
    const fakeBin = join(ws.dir, 'fake-bin');
    mkdirSync(fakeBin);
    const store = join(ws.dir, 'spool-crontab');
    writeFileSync(
      join(fakeBin, 'crontab'),
      [
        '#!/bin/sh',
        'case "$1" in',
        '  -l) [ -f "$STORE" ] || { echo "no crontab for tester" >&2; exit 1; }; cat "$STORE" ;;',
        '  -r) [ -f "$STORE" ] || { echo "no crontab for tester" >&2; exit 1; }; rm -f "$STORE" ;;',
        '  -) cat > "$STORE" ;;',
        '  *) exit 2 ;;',
        'esac',
        '',
      ].join('\n'),
      { mode: 0o755 },
    );
    const env = { ...process.env, PATH: `${fakeBin}:${process.env['PATH']}`, STORE: store };
    const flags = ['--spec-dir', ws.specDir, '--cron-timezone', 'UTC', '--state-dir', ws.dir];
    const m = ws.manifest(manifest);
    expect(cronix(['apply', m, ...flags], { env }).status).toBe(0);
    expect(readFileSync(store, 'utf8')).toMatch(/trigger billing\.settle/);
    const r = cronix(['prune', '--app', 'billing', '--yes', ...flags], { env });
    expect(r.stderr).not.toMatch(/error/);
    expect(r.status).toBe(0);
    expect(existsSync(store)).toBe(false);
  });
});

describe('host-mode commands name jobs app/job too', () => {
  it('show takes app/job and app.job, list and show print app/job, trigger takes both', () => {
    const ws = workspace();
    const manifest = { version: 1, app: 'billing', jobs: [job('settle')] };
    expect(cronix(['apply', ws.manifest(manifest), ...ws.flags]).status).toBe(0);
    for (const name of ['billing/settle', 'billing.settle']) {
      const show = cronix(['show', name, ...ws.flags]);
      expect(show.status).toBe(0);
      expect(show.stdout).toMatch(/^billing\/settle in crontab /);
    }
    const list = cronix(['list', ...ws.flags]);
    expect(list.stdout).toMatch(/^ENTRY\s+JOB\s+INDEX/);
    expect(list.stdout).toMatch(/^cronix-billing-settle-0\s+billing\/settle\s+0\s/m);
    const bad = cronix(['show', 'billing', ...ws.flags]);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/must be named app\/job \(or app\.job\)/);
    // the shim reads <spec-dir>/billing.settle.json for either name
    const empty = join(ws.dir, 'no-specs');
    mkdirSync(empty);
    for (const name of ['billing/settle', 'billing.settle']) {
      const fire = cronix(['trigger', name, '--spec-dir', empty], {
        env: { PATH: process.env['PATH'] },
      });
      expect(fire.status).toBe(3);
      expect(fire.stdout).toContain(`no spec file \\"${join(empty, 'billing.settle.json')}\\"`);
    }
  });
});
