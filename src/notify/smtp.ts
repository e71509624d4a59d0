/**
 * An SMTP delivery (SPEC §12): a plain-text mail through nodemailer. With `starttls` (the
 * default) the connection must upgrade with STARTTLS before anything is sent — a server that
 * does not offer it fails the delivery rather than receiving credentials in the clear. A 5xx
 * reply is permanent; connection problems, timeouts and 4xx replies are retried. Credentials
 * come resolved from secret refs and never appear in errors.
 */
import type { ConnectionOptions } from 'node:tls';
import nodemailer from 'nodemailer';
import { notifyMail, type NotifyPayload } from './message.js';
import { DELIVERY_TIMEOUT_MS, type Deliver, type DeliveryResult } from './types.js';

/** A resolved SMTP notifier. */
export interface SmtpTarget {
  host: string;
  port: number;
  from: string;
  to: readonly string[];
  starttls: boolean;
  auth?: { user: string; pass: string };
  /** Extra TLS options (a private CA in tests and on-premises relays). */
  tls?: ConnectionOptions;
  timeoutMs?: number;
}

/** A {@link Deliver} for one SMTP notifier. */
export function smtpSender(target: SmtpTarget): Deliver {
  const timeoutMs = target.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const transport = nodemailer.createTransport({
    host: target.host,
    port: target.port,
    secure: false,
    requireTLS: target.starttls,
    ignoreTLS: !target.starttls,
    ...(target.auth ? { auth: target.auth } : {}),
    ...(target.tls ? { tls: target.tls } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return async (body, notificationId): Promise<DeliveryResult> => {
    const mail = notifyMail(JSON.parse(body) as NotifyPayload);
    try {
      await transport.sendMail({
        from: target.from,
        to: [...target.to],
        subject: mail.subject,
        text: mail.text,
        headers: { 'X-Cron-Notification-Id': notificationId },
      });
      return { ok: true, status: null };
    } catch (err) {
      const e = err as { responseCode?: number; code?: string; message?: string };
      const code = typeof e.responseCode === 'number' ? e.responseCode : null;
      let reason = code !== null ? `SMTP ${code}` : (e.code ?? 'SMTP error');
      if (e.message) reason += `: ${e.message.split('\n')[0]!.slice(0, 200)}`;
      for (const secret of [target.auth?.user, target.auth?.pass])
        if (secret) reason = reason.split(secret).join('[REDACTED]');
      return {
        ok: false,
        permanent: code !== null && code >= 500,
        status: code,
        error: reason,
        retryAfterMs: null,
      };
    }
  };
}
