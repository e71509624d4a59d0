/**
 * `notifiers` and `jobs[].notify` (SPEC §12): accepted shapes, normalization and canonical
 * form, and bad input reported at the field with the value and the fix.
 */
import { describe, expect, it } from 'vitest';
import { canonicalize, parseManifest } from '../../src/contract/manifest/index.js';

const job = (extra: Record<string, unknown> = {}) => ({
  name: 'sync',
  schedule: '*/5 * * * *',
  request: { url: 'https://app.internal/sync' },
  auth: { secret_refs: ['env:CRON_SECRET'] },
  ...extra,
});
const manifest = (jobs: unknown[], notifiers?: unknown) => ({
  version: 1,
  app: 'shop',
  jobs,
  ...(notifiers !== undefined ? { notifiers } : {}),
});
const errorsOf = (raw: unknown) => {
  const r = parseManifest(raw);
  if (r.ok) throw new Error('expected errors');
  return r.errors;
};

describe('notifications in the manifest', () => {
  it('accepts webhook and smtp notifiers and notify entries; canonical form keeps what was set', () => {
    const r = parseManifest(
      manifest(
        [
          job({
            notify: [
              { to: 'mail' },
              { to: 'chat', on: ['failed', 'slow'], slow_after_seconds: 900 },
            ],
          }),
        ],
        {
          mail: {
            type: 'smtp',
            host: 'smtp.example.com',
            from: 'cronix@example.com',
            to: ['ops@example.com'],
            username_ref: 'env:U',
            password_ref: 'file:/run/p',
          },
          chat: { type: 'webhook', url_ref: 'env:SLACK_URL' },
        },
      ),
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const text = canonicalize(r.manifest);
    expect(text).toContain(
      '"notify":[{"to":"mail"},{"to":"chat","on":["failed","slow"],"slow_after_seconds":900}]}]',
    );
    expect(text).toContain(
      ',"notifiers":{"chat":{"type":"webhook","url_ref":"env:SLACK_URL"},"mail":{"type":"smtp","host":"smtp.example.com","from":"cronix@example.com","to":["ops@example.com"],"username_ref":"env:U","password_ref":"file:/run/p"}}}',
    );
    // parse ∘ canonicalize is stable
    const again = parseManifest(JSON.parse(text));
    expect(again.ok && canonicalize(again.manifest)).toBe(text);
  });

  it('a plain manifest and an empty notify list canonicalize as before', () => {
    const plain = parseManifest(manifest([job()]));
    const empty = parseManifest(manifest([job({ notify: [] })], {}));
    expect(plain.ok && empty.ok && canonicalize(empty.manifest)).toBe(
      plain.ok && canonicalize(plain.manifest),
    );
  });

  it('reports every mistake at its field, with the value and the fix', () => {
    const errors = errorsOf(
      manifest(
        [
          job({
            notify: [
              { to: 'pager', on: ['failed', 'late'] },
              { to: 'chat', on: ['failed'], slow_after_seconds: 60, repeat_every_seconds: 0 },
              { to: 'chat' },
            ],
          }),
        ],
        {
          chat: { type: 'webhook', url: 'ftp://x/y', host: 'h' },
          mail: {
            type: 'smtp',
            host: 'smtp',
            from: 'not-an-address',
            to: [],
            password_ref: 'env:P',
          },
          Bad: { type: 'webhook', url: 'https://x' },
        },
      ),
    );
    expect(errors).toEqual([
      {
        path: 'jobs/0/notify/0/on/1',
        message: 'expected one of "failed", "missed", "recovered", "slow", found "late"',
      },
      {
        path: 'jobs/0/notify/0/to',
        message: 'notifier "pager" is not defined in "notifiers" (defined: Bad, chat, mail)',
      },
      {
        path: 'jobs/0/notify/1/repeat_every_seconds',
        message: 'expected an integer from 1 to 604800, found 0',
      },
      {
        path: 'jobs/0/notify/1/slow_after_seconds',
        message:
          'slow_after_seconds only applies when "on" includes "slow"; add "slow" to "on" or remove it',
      },
      {
        path: 'jobs/0/notify/2/to',
        message: 'duplicate notify entry for "chat": notify/1 already sends to it; merge them',
      },
      {
        path: 'notifiers/Bad',
        message:
          'expected a name of lowercase letters, digits and \'-\', starting with a letter, at most 63 characters, found "Bad"; did you mean "bad"?',
      },
      {
        path: 'notifiers/chat/host',
        message: '"host" belongs to smtp notifiers, not to type "webhook"; remove it',
      },
      {
        path: 'notifiers/chat/url',
        message: 'expected an http:// or https:// URL, found scheme "ftp:" in "ftp://x/y"',
      },
      {
        path: 'notifiers/mail',
        message:
          'expected both "username_ref" and "password_ref" or neither, found only "password_ref"',
      },
      { path: 'notifiers/mail/from', message: expect.stringContaining('found "not-an-address"') },
      {
        path: 'notifiers/mail/to',
        message: expect.stringMatching(/at least 1.*found an empty array|found an empty array/),
      },
    ]);
  });

  it('a notifier needs the fields of its type', () => {
    expect(
      errorsOf(
        manifest([job()], { a: { type: 'webhook' }, b: { type: 'smtp' }, c: { type: 'pager' } }),
      ),
    ).toEqual([
      {
        path: 'notifiers/a',
        message:
          'a webhook notifier needs "url" (or "url_ref", a secret ref holding the URL), found neither',
      },
      { path: 'notifiers/b', message: 'an smtp notifier needs "host", found nothing' },
      { path: 'notifiers/b', message: 'an smtp notifier needs "from", found nothing' },
      { path: 'notifiers/b', message: 'an smtp notifier needs "to", found nothing' },
      { path: 'notifiers/c/type', message: 'expected one of "webhook", "smtp", found "pager"' },
    ]);
  });
});
