/**
 * The first hour, tried as a new user would (manifest items): names are explained in words with
 * the fixed name suggested (not a regular expression), `https:/x` and `http:///x` are refused in
 * manifests and in the shim's spec files, and command jobs may run up to a day while HTTP jobs
 * keep the v1 limit of 600 s. CLI cases run the built binary (`npm run build` first).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { suggestName } from '../../src/contract/manifest/describe.js';
import { cronix } from '../helpers/cli.js';
import { shimDirs, startShim } from '../helpers/shim.js';

const job = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'a',
  schedule: '@hourly',
  request: { url: 'https://x.example.com/cron/a' },
  ...extra,
});
const errorsOf = (m: unknown): { path: string; message: string }[] => {
  const r = parseManifest(m);
  return r.ok ? [] : r.errors;
};

describe('names are explained in words, with the fixed name', () => {
  it('a job name with "_" says which characters are allowed and suggests one', () => {
    const errors = errorsOf({
      version: 1,
      app: 'billing',
      jobs: [job({ name: 'settle_invoices' })],
    });
    expect(errors).toEqual([
      {
        path: 'jobs/0/name',
        message:
          'expected a name of lowercase letters, digits and \'-\', starting with a letter, at most 63 characters, found "settle_invoices"; did you mean "settle-invoices"?',
      },
    ]);
    for (const e of errors) expect(e.message).not.toMatch(/\^\[a-z\]|matching/);
  });

  it('suggestName: lowercase, "-" for the rest, a letter first, 63 characters at most', () => {
    expect(suggestName('settle_invoices')).toBe('settle-invoices');
    expect(suggestName('Billing')).toBe('billing');
    expect(suggestName('9 Lives!!')).toBe('lives');
    expect(suggestName('x'.repeat(70))).toBe('x'.repeat(63));
    expect(suggestName('___')).toBeNull();
    expect(suggestName('ok-name')).toBeNull();
  });

  it('secret refs are described, not shown as a pattern', () => {
    const errors = errorsOf({
      version: 1,
      app: 'billing',
      jobs: [job({ auth: { secret_refs: ['$CRON SECRET'] } })],
    });
    expect(errors[0]?.message).toMatch(/^expected a secret ref such as env:CRON_SECRET/);
  });

  it('cronix validate prints the words and the suggestion', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-first-hour-names-'));
    const file = join(dir, 'm.json');
    writeFileSync(
      file,
      JSON.stringify({ version: 1, app: 'Billing', jobs: [job({ name: 'settle_invoices' })] }),
    );
    const r = cronix(['validate', file]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('app: expected a name of lowercase letters');
    expect(r.stdout).toContain('did you mean "billing"?');
    expect(r.stdout).toContain('did you mean "settle-invoices"?');
    expect(r.stdout).not.toContain('^[a-z]');
  });
});

describe('URLs are written scheme://host literally', () => {
  it.each(['https:/x', 'http:///x', 'https:x', 'http:\\\\x/run', 'HTTPS:/x/y'])(
    '%s is refused in a manifest',
    (url) => {
      const errors = errorsOf({ version: 1, app: 'a', jobs: [job({ request: { url } })] });
      expect(errors).toHaveLength(1);
      expect(errors[0]?.path).toBe('jobs/0/request/url');
      expect(errors[0]?.message).toMatch(/^expected a URL of the form http:\/\/host\/path/);
    },
  );

  it.each(['https://x', 'HTTP://billing.internal/run?a=1', 'http://[::1]:8080/x'])(
    '%s is accepted',
    (url) =>
      expect(errorsOf({ version: 1, app: 'a', jobs: [job({ request: { url } })] })).toEqual([]),
  );

  it('a webhook notifier URL follows the same rule', () => {
    const errors = errorsOf({
      version: 1,
      app: 'a',
      notifiers: { chat: { type: 'webhook', url: 'https:/hooks.example.com/x' } },
      jobs: [job()],
    });
    expect(errors.map((e) => e.path)).toEqual(['notifiers/chat/url']);
  });

  it('a spec file holding https:/x makes the shim exit 3 naming the field, sending nothing', async () => {
    const dirs = shimDirs('cronix-first-hour-url-');
    writeFileSync(
      join(dirs.specDir, 'app.a.json'),
      JSON.stringify({
        app: 'app',
        schedule_index: 0,
        secret_refs: ['env:CRON_SECRET'],
        job: {
          name: 'a',
          schedules: ['@hourly'],
          timezone: 'UTC',
          request: { method: 'POST', url: 'https:/127.0.0.1:9/x', headers: {}, body: '' },
          policy: {
            concurrency: 'Allow',
            concurrency_scope: 'host',
            timeout_seconds: 5,
            retries: { max_attempts: 1, min_seconds: 1, max_seconds: 60 },
          },
          auth: { secret_refs: ['env:CRON_SECRET'] },
        },
      }),
    );
    const run = await startShim('app.a', [
      '--spec-dir',
      dirs.specDir,
      '--lock-dir',
      dirs.lockDir,
      '--state-dir',
      dirs.stateDir,
    ]).done;
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/request\/url: expected a URL of the form http:\/\/host\/path/);
  });
});

describe('timeout_seconds: command jobs up to a day, HTTP jobs up to 600 s', () => {
  const command = { argv: ['/usr/local/bin/backup'] };
  it('a command job accepts 86,400 and refuses 86,401', () => {
    const ok = parseManifest({
      version: 1,
      app: 'ops',
      jobs: [{ name: 'backup', schedule: '@daily', command, policy: { timeout_seconds: 86_400 } }],
    });
    expect(ok.ok).toBe(true);
    const errors = errorsOf({
      version: 1,
      app: 'ops',
      jobs: [{ name: 'backup', schedule: '@daily', command, policy: { timeout_seconds: 86_401 } }],
    });
    expect(errors).toEqual([
      {
        path: 'jobs/0/policy/timeout_seconds',
        message: 'expected an integer from 1 to 86400, found 86401',
      },
    ]);
  });

  it('an HTTP job keeps 1..600, and the message says command jobs may run longer', () => {
    expect(
      errorsOf({ version: 1, app: 'a', jobs: [job({ policy: { timeout_seconds: 600 } })] }),
    ).toEqual([]);
    expect(
      errorsOf({ version: 1, app: 'a', jobs: [job({ policy: { timeout_seconds: 3600 } })] }),
    ).toEqual([
      {
        path: 'jobs/0/policy/timeout_seconds',
        message:
          'expected an integer from 1 to 600 for an HTTP job (only command jobs may run up to 86400), found 3600',
      },
    ]);
  });

  it('cronix validate accepts a two-hour command job', () => {
    const dir = mkdtempSync(join(tmpdir(), 'cronix-first-hour-timeout-'));
    const file = join(dir, 'm.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        app: 'ops',
        jobs: [{ name: 'backup', schedule: '@daily', command, policy: { timeout_seconds: 7200 } }],
      }),
    );
    const r = cronix(['validate', file]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});
