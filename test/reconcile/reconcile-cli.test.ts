/**
 * The reconciler commands through the built binary (`npm run build` first) on a crontab file in
 * a temp dir: plan/apply/drift/list/show/prune, exit codes, JSON shapes, INFO lines, and the
 * no-op guarantee as an operator sees it.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CLI } from '../helpers/cli.js';
import { cronixAsync, manifestOf, workspace } from './cli-helpers.js';

const env = { ...process.env, CRON_SECRET: 'not-used-by-apply' };
const run = (args: string[]) => cronixAsync(args, env);
const infoLines = (stderr: string): string[] =>
  stderr.split('\n').filter((l) => l.startsWith('info: '));

describe('cronix plan / apply / drift', () => {
  it('plans, applies, then a second apply changes nothing (no INFO line, file untouched)', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle', 'report']));

    const plan = await run(['plan', m, ...ws.flags, '-o', 'json']);
    expect(plan.status).toBe(0);
    const planned = JSON.parse(plan.stdout) as Record<string, unknown>;
    expect(Object.keys(planned)).toEqual([
      'command',
      'app',
      'backend',
      'creates',
      'updates',
      'deletes',
      'unchanged',
      'refusals',
      'summary',
      'target',
      'trigger_command',
      'spec_files',
      'changed',
      'applied',
      'dry_run',
    ]);
    expect(planned).toMatchObject({
      command: 'plan',
      app: 'billing',
      backend: 'crontab',
      target: ws.crontab,
      changed: true,
      applied: false,
    });
    expect(() => statSync(ws.crontab)).toThrow(); // plan wrote nothing
    expect(() => statSync(ws.specDir)).toThrow();

    const apply = await run(['apply', m, ...ws.flags]);
    expect(apply.status).toBe(0);
    expect(infoLines(apply.stderr)).toEqual([
      `info: wrote spec file ${ws.specDir}/billing.report.json`,
      `info: wrote spec file ${ws.specDir}/billing.settle.json`,
      'info: created cronix-billing-report-0 (*/10 * * * *)',
      'info: created cronix-billing-settle-0 (*/10 * * * *)',
    ]);
    const text = readFileSync(ws.crontab, 'utf8');
    expect(text).toContain(
      `*/10 * * * * root ${process.execPath} ${CLI} trigger billing.settle --spec-dir ${ws.specDir}\n`,
    );
    const stat = statSync(ws.crontab);
    const specStat = statSync(`${ws.specDir}/billing.settle.json`);
    expect(specStat.mode & 0o777).toBe(0o640);

    const again = await run(['apply', m, ...ws.flags]);
    expect(again.status).toBe(0);
    // nothing but the warning that cron will not see env:CRON_SECRET (it stays until fixed)
    expect(again.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('warning: '))).toEqual(
      [],
    );
    expect(again.stderr).toMatch(
      /^warning: job billing\/settle: secret ref env:CRON_SECRET reads \$CRON_SECRET, but cron starts commands with an almost empty environment, so it will be unset and every fire exits 3; use a file: ref/m,
    );
    expect(again.stdout).toMatch(/no changes, 2 entries up to date/);
    expect(statSync(ws.crontab).mtimeMs).toBe(stat.mtimeMs);
    expect(statSync(`${ws.specDir}/billing.settle.json`).mtimeMs).toBe(specStat.mtimeMs);

    const json = await run(['apply', m, ...ws.flags, '-o', 'json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      command: 'apply',
      changed: false,
      applied: true,
      summary: { unchanged: 2 },
    });
    const levels = json.stderr
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { level: string; event: string }).event);
    expect(levels).toEqual(['secret-ref-unseen', 'secret-ref-unseen']);
  });

  it('no env: warning when the refs are file: refs or the crontab sets the variable', async () => {
    const ws = workspace();
    const withFile = manifestOf('billing', [
      {
        name: 'settle',
        schedule: '*/10 * * * *',
        request: { url: 'https://billing.example.internal/settle' },
        auth: { secret_refs: ['file:/etc/cronix/secrets/cron-secret'] },
      },
    ]);
    const a = await run(['plan', ws.manifest(withFile), ...ws.flags]);
    expect(a.stderr).not.toMatch(/warning/);
    writeFileSync(ws.crontab, 'CRON_SECRET=from-the-crontab\n');
    const b = await run(['plan', ws.manifest(manifestOf('billing', ['settle'])), ...ws.flags]);
    expect(b.stderr).not.toMatch(/warning/);
  });

  it('warns about notifications the shim will not send: SMTP notifiers, an explicit "missed"', async () => {
    const ws = workspace();
    const job = (name: string, notify: unknown[]) => ({
      name,
      schedule: '*/10 * * * *',
      request: { url: `https://billing.example.internal/${name}` },
      auth: { secret_refs: ['file:/etc/cronix/secrets/cron-secret'] },
      notify,
    });
    const m = {
      ...manifestOf('billing', [
        job('settle', [{ to: 'mail' }, { to: 'chat' }]),
        job('report', [{ to: 'chat', on: ['failed', 'missed'] }]),
        job('quiet', [{ to: 'chat' }]),
      ]),
      notifiers: {
        mail: {
          type: 'smtp',
          host: 'smtp.example.com',
          from: 'c@example.com',
          to: ['o@example.com'],
        },
        chat: { type: 'webhook', url: 'https://chat.example.internal/hook' },
      },
    };
    const plan = await run(['plan', ws.manifest(m), ...ws.flags]);
    expect(plan.status).toBe(0);
    // jobs in name order, as the manifest is loaded
    expect(plan.stderr.split('\n').filter((l) => l.startsWith('warning: '))).toEqual([
      'warning: job "billing/report" notify "chat": "missed" is noticed by the daemon only (the trigger shim never sees a fire that did not happen); report to a cronix serve --watch (apply --report-to, docs/host-monitoring.md) or run the job under cronix serve to be told about missed fires',
      'warning: job "billing/settle" notify "mail": the trigger shim sends webhook notifications only, so this SMTP notifier will receive nothing from the installed entries; use a webhook notifier, or run the job under cronix serve',
    ]);
    // reporting to a serve --watch (SPEC §15): missed fires are noticed there, no warning
    const watched = await run([
      'plan',
      ws.manifest(m),
      ...ws.flags,
      '--report-to',
      'http://127.0.0.1:7070',
      '--report-secret-ref',
      'env:R',
    ]);
    expect(watched.stderr).not.toMatch(/"missed"/);
    expect(watched.stderr).toMatch(
      /notify "mail": the trigger shim sends webhook notifications only/,
    );
    const json = await run(['apply', ws.manifest(m), ...ws.flags, '-o', 'json']);
    expect(json.status).toBe(0);
    expect(
      json.stderr
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { level: string; event: string })
        .filter((l) => l.level === 'warning')
        .map((l) => l.event),
    ).toEqual(['notify-unsent', 'notify-unsent']);
  });

  it('renaming a job deletes the old entry and creates the new; drift exits 5 only with --exit-on-drift', async () => {
    const ws = workspace();
    await run(['apply', ws.manifest(manifestOf('billing', ['settle'])), ...ws.flags]);
    const renamed = ws.manifest(manifestOf('billing', ['settle-all']), 'renamed.json');

    const drift = await run(['drift', renamed, ...ws.flags, '--exit-on-drift', '-o', 'json']);
    expect(drift.status).toBe(5);
    expect(JSON.parse(drift.stdout)).toMatchObject({ command: 'drift', changed: true });
    expect((await run(['drift', renamed, ...ws.flags])).status).toBe(0);

    const apply = await run(['apply', renamed, ...ws.flags]);
    expect(apply.status).toBe(0);
    expect(infoLines(apply.stderr)).toEqual([
      `info: wrote spec file ${ws.specDir}/billing.settle-all.json`,
      'info: deleted cronix-billing-settle-0',
      'info: created cronix-billing-settle-all-0 (*/10 * * * *)',
      `info: removed spec file ${ws.specDir}/billing.settle.json`,
    ]);
    expect(readdirSync(ws.specDir).filter((f) => f.endsWith('.json'))).toEqual([
      'billing.settle-all.json',
    ]);
    const clean = await run(['drift', renamed, ...ws.flags, '--exit-on-drift']);
    expect(clean.status).toBe(0);
    expect(clean.stdout).toMatch(/no drift, 1 entries match/);
  });

  it('--dry-run and the diff alias write nothing', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle']));
    const dry = await run(['apply', m, ...ws.flags, '--dry-run', '-o', 'json']);
    expect(dry.status).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      command: 'apply',
      dry_run: true,
      applied: false,
      changed: true,
    });
    const diff = await run(['diff', m, ...ws.flags]);
    expect(diff.status).toBe(0);
    expect(diff.stdout).toMatch(/create\s+cronix-billing-settle-0/);
    expect(() => statSync(ws.crontab)).toThrow();
  });

  it('a refused plan exits 1 with the reason and writes nothing', async () => {
    const ws = workspace();
    const m = ws.manifest(
      manifestOf('billing', [
        'settle',
        {
          name: 'berlin',
          schedule: '0 9 * * *',
          timezone: 'Europe/Berlin',
          request: { url: 'https://b.example/x' },
          auth: { secret_refs: ['env:S'] },
        },
      ]),
    );
    const r = await run(['apply', m, ...ws.flags]);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /cronix-billing-berlin-0 \(0 9 \* \* \*\):\n {4}- timezone "Europe\/Berlin" differs .*--backend systemd/,
    );
    expect(r.stderr).toMatch(/1 entry was refused; nothing was written/);
    expect(() => statSync(ws.crontab)).toThrow();
    expect(() => statSync(`${ws.specDir}/billing.settle.json`)).toThrow();
  });
});

describe('cronix apply --report-to (SPEC §15)', () => {
  it('records report_to and report_secret_refs in every spec file and --report-to on every line; dropping the flags rewrites both', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle', 'report']));
    const url = 'http://127.0.0.1:7070/base';
    const flags = [...ws.flags, '--report-to', url, '--report-secret-ref', 'file:/etc/cronix/rs'];
    const apply = await run(['apply', m, ...flags]);
    expect(apply.status).toBe(0);
    for (const job of ['settle', 'report']) {
      const spec = JSON.parse(readFileSync(`${ws.specDir}/billing.${job}.json`, 'utf8')) as Record<
        string,
        unknown
      >;
      expect(spec).toMatchObject({ report_to: url, report_secret_refs: ['file:/etc/cronix/rs'] });
      expect(readFileSync(ws.crontab, 'utf8')).toContain(
        `trigger billing.${job} --spec-dir ${ws.specDir} --report-to ${url}\n`,
      );
    }
    const again = await run(['apply', m, ...flags]);
    expect(again.stdout).toMatch(/no changes, 2 entries up to date/);
    const off = await run(['apply', m, ...ws.flags]);
    expect(infoLines(off.stderr)).toEqual([
      `info: wrote spec file ${ws.specDir}/billing.report.json`,
      `info: wrote spec file ${ws.specDir}/billing.settle.json`,
      expect.stringMatching(/^info: updated cronix-billing-report-0/),
      expect.stringMatching(/^info: updated cronix-billing-settle-0/),
    ]);
    expect(readFileSync(ws.crontab, 'utf8')).not.toContain('--report-to');
    expect(readFileSync(`${ws.specDir}/billing.settle.json`, 'utf8')).not.toContain('report_to');
  });

  it('bad report flags are usage errors (exit 2) naming the flag, and nothing is written', async () => {
    const ws = workspace();
    const m = ws.manifest(manifestOf('billing', ['settle']));
    const cases: [string[], RegExp][] = [
      [['--report-to', 'http://x.example'], /--report-to needs --report-secret-ref REF/],
      [['--report-secret-ref', 'env:R'], /--report-secret-ref needs --report-to URL/],
      [
        ['--report-to', 'ftp://x.example', '--report-secret-ref', 'env:R'],
        /--report-to: expected an http:\/\/ or https:\/\/ URL, found "ftp:\/\/x.example"/,
      ],
      [
        ['--report-to', 'https://x.example/?k=1', '--report-secret-ref', 'env:R'],
        /--report-to: must be a base URL without query or fragment/,
      ],
      [
        ['--report-to', 'https://x.example', '--report-secret-ref', '$nope'],
        /--report-secret-ref: expected a secret ref .* found "\$nope"/,
      ],
    ];
    for (const [extra, message] of cases) {
      const r = await run(['apply', m, ...ws.flags, ...extra]);
      expect(r.status, extra.join(' ')).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(() => statSync(ws.crontab)).toThrow();
  });
});

describe('cronix list / show / prune', () => {
  it('lists and shows owned entries with stable JSON, then prunes only with --yes', async () => {
    const ws = workspace();
    await run(['apply', ws.manifest(manifestOf('billing', ['settle'])), ...ws.flags]);
    await run(['apply', ws.manifest(manifestOf('shop', ['restock']), 'shop.json'), ...ws.flags]);

    const list = await run(['list', ...ws.flags, '-o', 'json']);
    expect(list.status).toBe(0);
    const listed = JSON.parse(list.stdout) as { entries: Record<string, unknown>[] };
    expect(listed.entries.map((e) => e['id'])).toEqual([
      'cronix-billing-settle-0',
      'cronix-shop-restock-0',
    ]);
    expect(Object.keys(listed.entries[0]!)).toEqual([
      'id',
      'app',
      'job',
      'schedule_index',
      'hash',
      'modified',
    ]);
    expect(listed.entries[0]!['modified']).toBeNull();
    expect((await run(['list', ...ws.flags, '--app', 'shop'])).stdout).toMatch(
      /cronix-shop-restock-0.*ok/,
    );

    const show = await run(['show', 'billing.settle', ...ws.flags, '-o', 'json']);
    expect(show.status).toBe(0);
    const shown = JSON.parse(show.stdout) as Record<string, unknown>;
    expect(shown).toMatchObject({
      app: 'billing',
      job: 'settle',
      spec_file: { path: `${ws.specDir}/billing.settle.json`, present: true },
    });
    expect((await run(['show', 'billing.nope', ...ws.flags])).status).toBe(1);
    expect((await run(['show', 'not-a-target', ...ws.flags])).status).toBe(2);

    const preview = await run(['prune', '--app', 'billing', ...ws.flags]);
    expect(preview.status).toBe(2);
    expect(preview.stdout).toMatch(/would remove:[\s\S]*cronix-billing-settle-0[\s\S]*--yes/);
    expect(readFileSync(ws.crontab, 'utf8')).toContain('trigger billing.settle');

    const pruned = await run(['prune', '--app', 'billing', '--yes', ...ws.flags, '-o', 'json']);
    expect(pruned.status).toBe(0);
    expect(JSON.parse(pruned.stdout)).toMatchObject({
      confirmed: true,
      removed: ['cronix-billing-settle-0'],
    });
    const text = readFileSync(ws.crontab, 'utf8');
    expect(text).not.toContain('billing.settle');
    expect(text).toContain('trigger shop.restock');
    expect(readdirSync(ws.specDir).filter((f) => f.endsWith('.json'))).toEqual([
      'shop.restock.json',
    ]);
    expect((await run(['prune', '--app', 'billing', ...ws.flags])).status).toBe(0);
    expect((await run(['prune', ...ws.flags])).status).toBe(2);
  });
});
