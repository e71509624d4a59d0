/**
 * Resolves a manifest's notifiers into senders (SPEC §12): webhook URLs and signing secrets,
 * SMTP credentials, all from secret refs (`env:`, `file:`, `raw:`). Every problem is reported
 * at once, naming the app, the notifier and the ref — never a secret value or a secret URL.
 */
import type { Notifier } from '../contract/manifest/types.js';
import { checkUrl } from '../contract/manifest/request-rules.js';
import { NOTIFY_DEFAULTS } from '../contract/manifest/defaults.js';
import {
  refForDisplay,
  resolveSecretRefs,
  shortSecretsError,
  type SecretResolverDeps,
} from '../secrets/resolve.js';
import { smtpSender, type SmtpTarget } from './smtp.js';
import type { Deliver } from './types.js';
import { webhookSender } from './webhook.js';

/** A notifier ready to deliver. */
export interface ResolvedNotifier {
  name: string;
  type: Notifier['type'];
  deliver: Deliver;
}

/** Options of {@link resolveNotifiers}. */
export interface ResolveNotifiersOptions {
  env: Readonly<Record<string, string | undefined>>;
  readFile?: SecretResolverDeps['readFile'];
  /** Extra TLS options of SMTP connections (a private CA). */
  smtpTls?: SmtpTarget['tls'];
  /** Deadline of one delivery attempt, in ms. */
  timeoutMs?: number;
}

/** One ref, resolved, or the problem. */
function one(
  ref: string,
  deps: Partial<SecretResolverDeps>,
): { ok: true; value: string } | { ok: false; reason: string } {
  const r = resolveSecretRefs([ref], deps);
  const value = r.secrets[0];
  if (value !== undefined) return { ok: true, value };
  return {
    ok: false,
    reason: `secret ref ${refForDisplay(ref)}: ${r.unresolved[0]?.reason ?? 'not resolved'}`,
  };
}

/** Resolves the notifiers of one app; `who` names it in messages (`app billing`). */
export function resolveNotifiers(
  who: string,
  notifiers: Readonly<Record<string, Notifier>> | undefined,
  options: ResolveNotifiersOptions,
): { ok: true; notifiers: Map<string, ResolvedNotifier> } | { ok: false; errors: string[] } {
  const deps: Partial<SecretResolverDeps> = {
    env: options.env,
    ...(options.readFile ? { readFile: options.readFile } : {}),
  };
  const out = new Map<string, ResolvedNotifier>();
  const errors: string[] = [];
  for (const [name, n] of Object.entries(notifiers ?? {})) {
    const where = `${who}: notifier ${name}`;
    if (n.type === 'webhook') {
      let url = n.url;
      if (n.url_ref !== undefined) {
        const r = one(n.url_ref, deps);
        if (!r.ok) {
          errors.push(`${where}: url_ref ${r.reason}`);
          continue;
        }
        if (checkUrl(r.value) !== null) {
          errors.push(
            `${where}: url_ref ${refForDisplay(n.url_ref)} does not hold an absolute http:// or https:// URL without credentials`,
          );
          continue;
        }
        url = r.value;
      }
      const refs = n.secret_refs ?? [];
      const resolved = resolveSecretRefs(refs, deps);
      for (const u of resolved.unresolved)
        errors.push(`${where}: secret ref ${refForDisplay(u.ref)}: ${u.reason}`);
      const short = refs.length > 0 ? shortSecretsError(resolved) : null;
      if (short !== null) errors.push(`${where}: ${short}`);
      if (resolved.unresolved.length > 0 || short !== null || url === undefined) continue;
      out.set(name, {
        name,
        type: 'webhook',
        deliver: webhookSender({
          url,
          secrets: resolved.secrets,
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
        }),
      });
      continue;
    }
    let auth: SmtpTarget['auth'];
    if (n.username_ref !== undefined && n.password_ref !== undefined) {
      const user = one(n.username_ref, deps);
      const pass = one(n.password_ref, deps);
      if (!user.ok) errors.push(`${where}: username_ref ${user.reason}`);
      if (!pass.ok) errors.push(`${where}: password_ref ${pass.reason}`);
      if (!user.ok || !pass.ok) continue;
      auth = { user: user.value, pass: pass.value };
    }
    out.set(name, {
      name,
      type: 'smtp',
      deliver: smtpSender({
        host: n.host,
        port: n.port ?? NOTIFY_DEFAULTS.smtp_port,
        from: n.from,
        to: n.to,
        starttls: n.starttls ?? NOTIFY_DEFAULTS.starttls,
        ...(auth ? { auth } : {}),
        ...(options.smtpTls ? { tls: options.smtpTls } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      }),
    });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, notifiers: out };
}
