/**
 * Rules of the top-level `notifiers` and `jobs[].notify` (extension, SPEC §12) that JSON Schema
 * cannot say well: which fields each notifier type needs and allows, URLs, that every `to`
 * names a defined notifier (once per job), and `slow_after_seconds` only with `slow`.
 */
import { childPath, isRecord, own, quote } from './describe.js';
import { checkUrl } from './request-rules.js';

type Add = (path: string, message: string) => void;

const WEBHOOK_ONLY = ['url', 'url_ref', 'secret_refs'] as const;
const SMTP_ONLY = [
  'host',
  'port',
  'from',
  'to',
  'starttls',
  'username_ref',
  'password_ref',
] as const;

function checkWebhook(add: Add, n: Record<string, unknown>, path: string): void {
  const url = own(n, 'url');
  const urlRef = own(n, 'url_ref');
  if (url === undefined && urlRef === undefined)
    add(
      path,
      'a webhook notifier needs "url" (or "url_ref", a secret ref holding the URL), found neither',
    );
  else if (url !== undefined && urlRef !== undefined)
    add(path, 'expected exactly one of "url" and "url_ref", found both; keep one');
  if (typeof url === 'string') {
    const message = checkUrl(url);
    if (message !== null) add(childPath(path, 'url'), message);
  }
  for (const key of SMTP_ONLY)
    if (own(n, key) !== undefined)
      add(
        childPath(path, key),
        `"${key}" belongs to smtp notifiers, not to type "webhook"; remove it`,
      );
}

function checkSmtp(add: Add, n: Record<string, unknown>, path: string): void {
  for (const key of ['host', 'from', 'to'] as const)
    if (own(n, key) === undefined) add(path, `an smtp notifier needs "${key}", found nothing`);
  const user = own(n, 'username_ref');
  const password = own(n, 'password_ref');
  if ((user === undefined) !== (password === undefined))
    add(
      path,
      `expected both "username_ref" and "password_ref" or neither, found only ${user === undefined ? '"password_ref"' : '"username_ref"'}`,
    );
  for (const key of WEBHOOK_ONLY)
    if (own(n, key) !== undefined)
      add(
        childPath(path, key),
        `"${key}" belongs to webhook notifiers, not to type "smtp"; remove it`,
      );
}

/** Checks `notifiers`; returns the names defined (also those with errors). */
function checkNotifiers(add: Add, notifiers: unknown): Set<string> {
  const names = new Set<string>();
  if (!isRecord(notifiers)) return names;
  for (const name of Object.keys(notifiers)) {
    names.add(name);
    const n = notifiers[name];
    if (!isRecord(n)) continue;
    const path = childPath('notifiers', name);
    const type = own(n, 'type');
    if (type === 'webhook') checkWebhook(add, n, path);
    else if (type === 'smtp') checkSmtp(add, n, path);
  }
  return names;
}

function checkNotifyEntry(
  add: Add,
  entry: Record<string, unknown>,
  path: string,
  defined: ReadonlySet<string>,
  seen: Map<string, number>,
  index: number,
): void {
  const to = own(entry, 'to');
  if (typeof to === 'string') {
    if (!defined.has(to)) {
      const list = [...defined].sort();
      add(
        childPath(path, 'to'),
        `notifier ${quote(to)} is not defined in "notifiers"` +
          (list.length > 0 ? ` (defined: ${list.join(', ')})` : '; add it there'),
      );
    }
    const first = seen.get(to);
    if (first === undefined) seen.set(to, index);
    else
      add(
        childPath(path, 'to'),
        `duplicate notify entry for ${quote(to)}: notify/${first} already sends to it; merge them`,
      );
  }
  const on = own(entry, 'on');
  if (own(entry, 'slow_after_seconds') !== undefined && Array.isArray(on) && !on.includes('slow'))
    add(
      childPath(path, 'slow_after_seconds'),
      'slow_after_seconds only applies when "on" includes "slow"; add "slow" to "on" or remove it',
    );
}

/** Every notification rule of an untrusted manifest value. */
export function checkNotifications(add: Add, raw: unknown, maxJobs: number): void {
  const defined = checkNotifiers(add, own(raw, 'notifiers'));
  const jobs = own(raw, 'jobs');
  if (!Array.isArray(jobs)) return;
  for (let i = 0; i < Math.min(jobs.length, maxJobs); i++) {
    const notify = own(jobs[i], 'notify');
    if (!Array.isArray(notify)) continue;
    const seen = new Map<string, number>();
    notify.forEach((entry: unknown, k) => {
      if (isRecord(entry))
        checkNotifyEntry(
          add,
          entry,
          childPath(childPath(childPath('jobs', i), 'notify'), k),
          defined,
          seen,
          k,
        );
    });
  }
}
